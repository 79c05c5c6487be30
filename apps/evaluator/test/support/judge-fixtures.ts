import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { encryptionKeyOf, sealSecret } from '@tracewell/auth'
import {
  addDatasetItems,
  createDataset,
  createEvaluator,
  createExperiment,
  createLlmConnection,
  createProject,
  createPromptset,
  createPromptVersion,
  createTeam,
  llmConnectionKeyContext,
  type Db,
  type ExperimentDto,
  type SpanInsert,
} from '@tracewell/db'

// What the evaluator's queue tests share: a model server on this machine, traces to judge, and a
// project that judges every new trace.

/**
 * An OpenAI-compatible model on this machine that answers after `delayMs` with a judgment (or, to
 * an experiment's call, the same text as its answer), and keeps the ANSWER-… mark of each request.
 */
export function startSlowJudge(delayMs: number): Promise<{ server: Server; url: string; asked: string[]; inFlight: () => number }> {
  const asked: string[] = []
  let inFlight = 0
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => (body += chunk.toString()))
    request.on('end', () => {
      asked.push(/ANSWER-[\w-]+/.exec(body)?.[0] ?? body)
      inFlight++
      setTimeout(() => {
        inFlight--
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(JSON.stringify({
          id: 'x', object: 'chat.completion', created: 0, model: 'judge-model',
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: JSON.stringify({ score: 1, reasoning: 'fine' }) } }],
          usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 },
        }))
      }, delayMs)
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked, inFlight: () => inFlight })))
}

export function span(projectId: string, answer: string): SpanInsert {
  const now = BigInt(Date.now()) * 1_000_000n
  return {
    projectId, traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), parentSpanId: null, name: 'chat', kind: 3,
    startTimeUnixNano: String(now - 1_000_000_000n), endTimeUnixNano: String(now), durationNs: '1000000000',
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: 'openai', llmModel: 'gpt-4o', llmRequestType: 'chat', inputTokens: 10, outputTokens: 5, totalTokens: 15,
    attributes: { 'input.value': { stringValue: 'What is 2 + 2?' }, 'output.value': { stringValue: answer } }, resourceAttributes: {}, events: [], links: [],
  }
}

/** A project with an LLM connection to the model server. */
export async function connectedProject(db: Db, keyHex: string, modelUrl: string, name: string): Promise<{ projectId: string; connectionId: string }> {
  const team = await createTeam(db, { name })
  const projectId = (await createProject(db, { teamId: team.id, name })).id
  const connection = await createLlmConnection(db, {
    projectId, name: 'judge', provider: 'openai', baseUrl: modelUrl, apiKeySealed: sealSecret('sk-judge', encryptionKeyOf(keyHex), llmConnectionKeyContext(projectId)), apiKeyHint: '…',
  })
  return { projectId, connectionId: connection.id }
}

/** A project with an LLM connection to the judge and an evaluator judging every new trace. */
export async function judgedProject(db: Db, keyHex: string, judgeUrl: string, name: string): Promise<{ projectId: string; evaluatorId: string; connectionId: string }> {
  const project = await connectedProject(db, keyHex, judgeUrl, name)
  const evaluator = await createEvaluator(db, {
    projectId: project.projectId, name: 'judge', connectionId: project.connectionId, model: 'judge-model', prompt: 'Answer: {{output}}', promptRef: null, scoreName: 'fine', filter: {}, samplingRate: 1,
  })
  return { ...project, evaluatorId: evaluator.id }
}

/**
 * A queued prompt experiment of the project over `questions` (one dataset item each, its input
 * the `ANSWER-…` mark), on the project's connection, judged by `evaluatorIds`.
 */
export async function promptExperiment(
  db: Db,
  project: { projectId: string; connectionId: string },
  questions: readonly string[],
  evaluatorIds: readonly string[] = [],
): Promise<ExperimentDto> {
  const name = `experiment-${randomBytes(4).toString('hex')}`
  const dataset = await createDataset(db, { projectId: project.projectId, name, description: '', metadata: {} })
  const { version, items } = await addDatasetItems(
    db,
    dataset.id,
    questions.map((question, i) => ({ id: `q${i}`, input: { question }, expectedOutput: null, metadata: null, sourceTraceId: null, sourceSpanId: null })),
  )
  const promptset = await createPromptset(db, { projectId: project.projectId, name })
  const prompt = await createPromptVersion(db, { promptsetId: promptset.id, value: 'Say {{question}}', variables: ['question'], model: 'model', modelSettings: {}, tags: [], note: '', spanId: null, live: false })
  return createExperiment(db, {
    projectId: project.projectId, datasetId: dataset.id, datasetVersion: version, name, description: '', metadata: {}, kind: 'prompt',
    promptsetId: promptset.id, promptVersion: prompt.version, connectionId: project.connectionId, model: 'model', modelSettings: {}, evaluatorIds: [...evaluatorIds],
  }, items.map((item) => item.id))
}
