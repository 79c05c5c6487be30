import { SpanKind, type Tracer } from '@opentelemetry/api'
import { sendTraces, timedSpan } from './seed.ts'

export interface Scenario {
  /** The support chats of session-42, oldest first. */
  supportTraceIds: string[]
  billingTraceId: string
  reportTraceId: string
}

const client = SpanKind.CLIENT
const server = SpanKind.SERVER

const questions = [
  ['How do I reset my password?', 'Open Settings → Security and choose "Reset password". A link arrives by e-mail within a minute.'],
  ['The e-mail never came.', 'Check the spam folder first. I have sent a new link to the address on file.'],
  ['Found it, thanks!', 'Glad it worked. Anything else?'],
] as const

/**
 * What the browser tests look at, sent through the OpenTelemetry SDK: three support chats of one
 * session (Langtrace attributes), a failed billing call (OTel GenAI messages) and a nightly
 * report (OpenInference).
 */
export async function seedScenario(baseUrl: string, projectKey: string, now = Date.now()): Promise<Scenario> {
  const supportTraceIds: string[] = []
  await sendTraces(baseUrl, projectKey, 'support-bot', (tracer) => {
    questions.forEach(([question, answer], index) => {
      const start = now - (30 - index * 10) * 60_000
      supportTraceIds.push(supportChat(tracer, start, question, answer))
    })
  })
  let billingTraceId = ''
  await sendTraces(baseUrl, projectKey, 'billing-bot', (tracer) => {
    const start = now - 5 * 60_000
    const root = timedSpan(tracer, 'POST /invoice/explain', start, start + 2_400, { kind: server, attributes: { 'http.method': 'POST', 'session.id': 'session-77', 'user.id': 'user-9' }, error: 'upstream rate limit' })
    const call = timedSpan(tracer, 'chat claude-sonnet-4', start + 100, start + 2_300, {
      parent: root.context,
      kind: client,
      error: '429 Too Many Requests',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-sonnet-4',
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Why is my invoice higher this month?' }] }]),
        'gen_ai.usage.input_tokens': 812,
        'gen_ai.usage.output_tokens': 0,
      },
    })
    call.end()
    root.end()
    billingTraceId = root.span.spanContext().traceId
  })
  let reportTraceId = ''
  await sendTraces(baseUrl, projectKey, 'reporter', (tracer) => {
    const start = now - 2 * 60_000
    const root = timedSpan(tracer, 'nightly-report', start, start + 9_000)
    for (let i = 0; i < 3; i++) {
      const step = timedSpan(tracer, `summarise section ${i + 1}`, start + 200 + i * 2_800, start + 2_900 + i * 2_800, {
        parent: root.context,
        kind: client,
        attributes: {
          'openinference.span.kind': 'LLM',
          'llm.provider': 'openai',
          'llm.model_name': 'gpt-4o-mini',
          'llm.input_messages.0.message.role': 'user',
          'llm.input_messages.0.message.content': `Summarise section ${i + 1} of the sales report.`,
          'llm.output_messages.0.message.role': 'assistant',
          'llm.output_messages.0.message.content': `Section ${i + 1}: sales grew 4%.`,
          'llm.token_count.prompt': 1_200 + i,
          'llm.token_count.completion': 40,
        },
      })
      step.end()
    }
    root.end()
    reportTraceId = root.span.spanContext().traceId
  })
  return { supportTraceIds, billingTraceId, reportTraceId }
}

function supportChat(tracer: Tracer, start: number, question: string, answer: string): string {
  const session = { 'session.id': 'session-42', 'user.id': 'user-7' }
  const root = timedSpan(tracer, 'POST /chat', start, start + 1_850, { kind: server, attributes: { 'http.method': 'POST', 'http.route': '/chat', ...session } })
  const retrieve = timedSpan(tracer, 'retrieve-docs', start + 20, start + 240, { parent: root.context, attributes: { 'db.system': 'postgresql', 'retrieval.documents': 4 } })
  retrieve.end()
  const llm = timedSpan(tracer, 'openai.chat.completions.create', start + 260, start + 1_800, {
    parent: root.context,
    kind: client,
    attributes: {
      'llm.vendor': 'openai',
      'llm.request.model': 'gpt-4o',
      'llm.request.type': 'chat',
      'llm.prompts': JSON.stringify([
        { role: 'system', content: 'You are the support agent of Acme. Be brief.' },
        { role: 'user', content: question },
      ]),
      'llm.completions': JSON.stringify([{ role: 'assistant', content: answer }]),
      'gen_ai.usage.input_tokens': 96,
      'gen_ai.usage.output_tokens': 31,
      ...session,
    },
  })
  llm.end()
  root.end()
  return root.span.spanContext().traceId
}

/** One trace of `count` spans: a root, a few hundred tool steps each with children, for the waterfall. */
export async function seedLargeTrace(baseUrl: string, projectKey: string, count: number, now = Date.now()): Promise<string> {
  let traceId = ''
  await sendTraces(baseUrl, projectKey, 'agent', (tracer) => {
    const start = now - 60 * 60_000
    const root = timedSpan(tracer, 'agent run', start, start + count * 2 + 10)
    let made = 1
    let step = 0
    while (made < count) {
      const at = start + 5 + step * 20
      const parent = timedSpan(tracer, `step ${step}`, at, at + 18, { parent: root.context })
      made++
      for (let i = 0; i < 9 && made < count; i++, made++) {
        const child = timedSpan(tracer, `tool call ${step}.${i}`, at + 1 + i, at + 2 + i, { parent: parent.context, ...(i === 4 && step % 50 === 0 ? { error: 'tool failed' } : {}) })
        child.end()
      }
      parent.end()
      step++
    }
    root.end()
    traceId = root.span.spanContext().traceId
  })
  return traceId
}
