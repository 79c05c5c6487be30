import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { AllInOneConfigSchema, loadConfig, TestEnvironmentSchema } from '@tracewell/config'
import { countSpans, sql } from '@tracewell/db'
import { createTestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { buildAllInOneApp } from '../src/index.ts'

// LLM-as-judge end to end: `npm start` over Postgres and Redis (the evaluations queue in BullMQ),
// traces sent as an application sends them (OTLP/JSON to /v1/traces), judged by a fake
// OpenAI-compatible server written here. New traces that match the evaluator's filter get an
// `eval` score within 30 s; the others none; a judge that keeps failing leaves a failed judgment
// with its error; a rate-limited one is retried; an on-demand run judges a time range.

interface JudgeRequest {
  authorization: string | undefined
  body: { model: string; temperature?: number; response_format?: { type: string }; messages: Array<{ role: string; content: string }> }
}

/** An OpenAI-compatible chat completions endpoint that judges whether the answer names Paris. */
function startFakeJudge(): Promise<{ server: Server; url: string; requests: JudgeRequest[] }> {
  const requests: JudgeRequest[] = []
  const flakySeen = new Set<string>()
  const server = createServer(async (request: IncomingMessage, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JudgeRequest['body']
    requests.push({ authorization: request.headers.authorization, body })
    const send = (status: number, payload: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(JSON.stringify(payload))
    }
    if (request.url !== '/v1/chat/completions' || request.method !== 'POST') return send(404, { error: { message: `no route ${request.url}` } })
    if (request.headers.authorization !== 'Bearer sk-judge-secret-0123456789') return send(401, { error: { message: 'Incorrect API key provided' } })
    const prompt = body.messages.find((message) => message.role === 'user')?.content ?? ''
    if (prompt.includes('ALWAYS-FAIL')) return send(500, { error: { message: 'the judge is down' } })
    // Answered, and paid for, but no judgment: the usage must count all the same.
    if (prompt.includes('NOT-JSON')) {
      return send(200, { id: 'chatcmpl-prose', object: 'chat.completion', created: 0, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'I would rather not say.', refusal: null } }], usage: { prompt_tokens: 120, completion_tokens: 20, total_tokens: 140 } })
    }
    const flaky = /FLAKY-\w+/.exec(prompt)?.[0]
    if (flaky !== undefined && !flakySeen.has(flaky)) {
      flakySeen.add(flaky)
      return send(429, { error: { message: 'Rate limit reached' } })
    }
    const correct = /Answer:.*Paris/s.test(prompt)
    send(200, {
      id: `chatcmpl-${randomUUID()}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: 'gpt-4o-mini-2024-07-18',
      choices: [
        {
          index: 0,
          finish_reason: 'stop',
          message: { role: 'assistant', content: JSON.stringify({ score: correct ? 1 : 0, reasoning: correct ? 'Paris is the capital of France.' : 'The answer does not name Paris.' }), refusal: null },
        },
      ],
      usage: { prompt_tokens: 120, completion_tokens: 20, total_tokens: 140 },
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests })))
}

const projectKey = `tw_proj_${randomBytes(24).toString('hex')}`
const teamKey = `tw_team_${randomBytes(24).toString('hex')}`
const randomHex = (bytes: number) => randomBytes(bytes).toString('hex')

/** One LLM call as OpenLLMetry records it, as the root span of a new trace, sent as OTLP/JSON. */
function chatTrace(service: string, question: string, answer: string): { traceId: string; body: string } {
  const traceId = randomHex(16)
  const now = BigInt(Date.now()) * 1_000_000n
  const string = (key: string, value: string) => ({ key, value: { stringValue: value } })
  const body = {
    resourceSpans: [
      {
        resource: { attributes: [string('service.name', service)] },
        scopeSpans: [
          {
            scope: { name: 'judge-test' },
            spans: [
              {
                traceId,
                spanId: randomHex(8),
                name: 'openai.chat',
                kind: 3,
                startTimeUnixNano: String(now - 900_000_000n),
                endTimeUnixNano: String(now),
                attributes: [
                  string('gen_ai.system', 'openai'),
                  string('gen_ai.request.model', 'gpt-4o'),
                  string('gen_ai.prompt.0.role', 'user'),
                  string('gen_ai.prompt.0.content', question),
                  string('gen_ai.completion.0.role', 'assistant'),
                  string('gen_ai.completion.0.content', answer),
                ],
              },
            ],
          },
        ],
      },
    ],
  }
  return { traceId, body: JSON.stringify(body) }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

interface Score {
  name: string
  value: unknown
  source: string
  comment: string | null
  author: string
  evaluatorId: string | null
}

// Both ways `npm start` runs: over Postgres and Redis (BullMQ), and on its embedded defaults
// (PGlite, the in-process queue).
for (const mode of ['Postgres and Redis', 'embedded PGlite and in-process queue'] as const) describe(`LLM-as-judge evaluators, end to end (${mode})`, { timeout: 120_000 }, () => {
  let judge: Awaited<ReturnType<typeof startFakeJudge>>
  let cleanUp: () => Promise<void>
  let app: App
  const headers = { 'x-api-key': projectKey }
  // Connections and evaluators spend the project's provider key: the team key sets them up.
  const api = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
    const scoped = `${url}${url.includes('?') ? '&' : '?'}project_id=support`
    const response = await app.inject({ method, url: scoped, headers: { 'x-api-key': teamKey, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) })
    return { status: response.statusCode, body: response.json() }
  }
  const send = async (trace: { body: string }) => {
    const response = await app.inject({ method: 'POST', url: '/v1/traces', headers: { ...headers, 'content-type': 'application/json' }, payload: trace.body })
    assert.equal(response.statusCode, 200, response.body)
  }
  const scoresOf = async (traceId: string): Promise<Score[]> => (await api('GET', `/api/scores?trace_id=${traceId}`)).body.scores
  let evaluatorId: string
  let connectionId: string
  let oldTrace: { traceId: string; body: string }

  before(async () => {
    judge = await startFakeJudge()
    let stores: Record<string, string>
    if (mode === 'Postgres and Redis') {
      const database = await createTestDatabase()
      cleanUp = () => database.drop()
      stores = { DATABASE_URL: database.url, REDIS_URL: loadConfig(TestEnvironmentSchema).REDIS_URL }
    } else {
      const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-judge-'))
      cleanUp = async () => rmSync(dataDir, { recursive: true, force: true })
      stores = { DATA_DIR: dataDir }
    }
    const config = loadConfig(AllInOneConfigSchema, {
      ...stores,
      QUEUE_PREFIX: testQueuePrefix(),
      LOG_LEVEL: 'silent',
      GRPC_PORT: '0',
      INIT_TEAM_NAME: 'ops',
      INIT_TEAM_API_KEY: teamKey,
      INIT_PROJECT_NAME: 'support',
      INIT_PROJECT_ID: 'support',
      INIT_PROJECT_API_KEY: projectKey,
      LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      EVALUATOR_POLL_INTERVAL_MS: '250',
      EVALUATOR_TRACE_QUIET_MS: '1000',
      EVALUATOR_BACKOFF_MS: '100',
      EVALUATOR_MAX_ATTEMPTS: '3',
      EVALUATOR_CONCURRENCY: '2',
      // The fake judge listens on loopback, which the outbound policy refuses unless allowed.
      OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32',
    })
    ;({ app } = await buildAllInOneApp(config))
    // A trace stored before the evaluator exists: not a new trace, judged only by a run. Its 200
    // says it is queued, not stored (the writer may wait WRITER_LINGER_MS for a COPY to share),
    // and an evaluator judges the traces stored after it is made: so it is waited for.
    oldTrace = chatTrace('support-bot', 'What is the capital of France?', 'It is Paris.')
    await send(oldTrace)
    await waitFor('the old trace stored', async () => ((await countSpans(app.db, 'support')) === 1 ? true : undefined), 30_000)
  })
  after(async () => {
    await app?.close()
    await cleanUp?.()
    judge?.server.close()
  })

  it('keeps an LLM connection’s key sealed and never returns it', async () => {
    const created = await api('POST', '/api/llm-connections', { name: 'judge', provider: 'openai', baseUrl: `${judge.url}/v1/`, apiKey: 'sk-judge-secret-0123456789' })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    connectionId = created.body.id
    assert.deepEqual({ ...created.body, id: undefined, createdAt: undefined }, {
      id: undefined, createdAt: undefined, projectId: 'support', name: 'judge', provider: 'openai', baseUrl: `${judge.url}/v1`, apiKeyHint: '…6789',
    })
    const listed = await api('GET', '/api/llm-connections')
    assert.ok(!JSON.stringify(listed.body).includes('sk-judge'), 'the key is in no answer')
    const { rows } = await sql<{ api_key_sealed: string }>`select api_key_sealed from llm_connections`.execute(app.db)
    assert.match(rows[0]?.api_key_sealed ?? '', /^v1:/)
    assert.ok(!Buffer.from((rows[0]?.api_key_sealed ?? '').slice(3), 'base64').toString('latin1').includes('sk-judge'), 'nor in the database')
    const refused = await api('POST', '/api/llm-connections', { name: 'x', provider: 'openai', baseUrl: 'ftp://judge', apiKey: 'k' })
    assert.deepEqual([refused.status, refused.body.message], [400, 'body/baseUrl: must be http:// or https://, got ftp:'])
  })

  it('refuses an evaluator that could not judge, naming why', async () => {
    const base = { name: 'bad', connectionId: 'nope', model: 'gpt-4o-mini', prompt: 'Q: {{input}} A: {{output}}', scoreName: 'correctness' }
    const cases: Array<[unknown, string]> = [
      [base, 'body/connectionId: no LLM connection "nope" in this project'],
      [{ ...base, connectionId: '' }, 'body/connectionId: must match pattern "^[A-Za-z0-9_-]{1,64}$"'],
      [{ ...base, connectionId, prompt: 'Judge this.' }, 'body/prompt: the template shows the judge neither {{input}} nor {{output}}'],
      [{ ...base, connectionId, prompt: { name: 'judges', label: 'production' } }, 'body/prompt: no prompt registry "judges" with a version labelled "production"'],
      [{ ...base, connectionId, filter: { servce: 'x' } }, 'body/filter: must NOT have additional properties'],
      [{ ...base, connectionId, filter: { min_score: 1 } }, 'body/filter/min_score: needs score_name'],
      [{ ...base, connectionId, samplingRate: 1.5 }, 'body/samplingRate: must be <= 1'],
    ]
    for (const [payload, message] of cases) {
      const response = await api('POST', '/api/evaluators', payload)
      assert.deepEqual([response.status, response.body.message], [400, message], JSON.stringify(payload))
    }
  })

  it('gives new matching traces an eval score within 30 s, and non-matching ones none', async () => {
    assert.equal((await api('POST', '/api/score-configs', { name: 'correctness', dataType: 'numeric', minValue: 0, maxValue: 1 })).status, 201)
    const created = await api('POST', '/api/evaluators', {
      name: 'capital check',
      connectionId,
      model: 'gpt-4o-mini',
      prompt: 'Question: {{input}}\nAnswer: {{ output }}\nScore 1 if the answer is correct, else 0.',
      scoreName: 'correctness',
      filter: { service: 'support-bot' },
      samplingRate: 1,
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    evaluatorId = created.body.id
    assert.deepEqual(created.body.judgments, { pending: 0, completed: 0, failed: 0, skipped: 0 })

    const right = chatTrace('support-bot', 'What is the capital of France?', 'The capital of France is Paris.')
    const wrong = chatTrace('support-bot', 'What is the capital of France?', 'Lyon, I think.')
    const flaky = chatTrace('support-bot', 'FLAKY-one: what is the capital of France?', 'Paris.')
    const other = chatTrace('billing-bot', 'Why is my invoice higher?', 'Paris.')
    const sentAt = Date.now()
    for (const trace of [right, wrong, flaky, other]) await send(trace)

    const judged = await waitFor(
      'eval scores on the three matching traces',
      async () => {
        const found = await Promise.all([right, wrong, flaky].map((trace) => scoresOf(trace.traceId)))
        return found.every((scores) => scores.length === 1) ? found.map((scores) => scores[0] as Score) : undefined
      },
      30_000,
    )
    const tookMs = Date.now() - sentAt
    assert.ok(tookMs < 30_000, `${tookMs} ms`)
    assert.deepEqual(
      judged.map((score) => [score.name, score.value, score.source, score.comment, score.author, score.evaluatorId]),
      [
        ['correctness', 1, 'eval', 'Paris is the capital of France.', `evaluator:${evaluatorId}`, evaluatorId],
        ['correctness', 0, 'eval', 'The answer does not name Paris.', `evaluator:${evaluatorId}`, evaluatorId],
        ['correctness', 1, 'eval', 'Paris is the capital of France.', `evaluator:${evaluatorId}`, evaluatorId],
      ],
    )
    // The judge saw the trace's input and output, was asked for structured JSON at temperature 0, with the connection's key.
    const asked = judge.requests.find((request) => request.body.messages.some((message) => message.content.includes('Lyon, I think.')))
    assert.ok(asked)
    assert.equal(asked.authorization, 'Bearer sk-judge-secret-0123456789')
    assert.deepEqual([asked.body.model, asked.body.temperature, asked.body.response_format?.type], ['gpt-4o-mini', 0, 'json_schema'])
    assert.equal(asked.body.messages[1]?.content, 'Question: user: What is the capital of France?\nAnswer: assistant: Lyon, I think.\nScore 1 if the answer is correct, else 0.')
    // Neither the other service's trace nor the trace stored before the evaluator existed.
    await app.evaluator.scheduler.look()
    assert.deepEqual(await scoresOf(other.traceId), [])
    assert.deepEqual(await scoresOf(oldTrace.traceId), [])
    assert.equal(judge.requests.filter((request) => request.body.messages.some((message) => message.content.includes('invoice'))).length, 0)

    // The judgments: the rate-limited one took two attempts; tokens and the judge's cost recorded.
    // A judgment's row completes a moment after its score is written.
    const judgments = await waitFor(
      'the three judgments to complete',
      async () => {
        const { judgments: found } = (await api('GET', `/api/evaluators/${evaluatorId}/judgments?status=completed`)).body
        return found.length === 3 ? (found as Array<Record<string, unknown>>) : undefined
      },
      10_000,
    )
    assert.equal((await api('GET', `/api/evaluators/${evaluatorId}/judgments`)).body.judgments.length, 3)
    for (const judgment of judgments) {
      assert.deepEqual([judgment.status, judgment.judgeModel, judgment.inputTokens, judgment.outputTokens], ['completed', 'gpt-4o-mini-2024-07-18', 120, 20])
      assert.ok(typeof judgment.costUsd === 'number' && judgment.costUsd > 0 && judgment.costUsd < 0.001, String(judgment.costUsd))
    }
    assert.equal(judgments.find((judgment) => judgment.traceId === flaky.traceId)?.attempts, 2)
    const stats = (await api('GET', `/api/evaluators/${evaluatorId}`)).body
    assert.deepEqual([stats.judgments, stats.judge.inputTokens, stats.judge.outputTokens], [{ pending: 0, completed: 3, failed: 0, skipped: 0 }, 360, 60])
  })

  it('keeps a judgment that keeps failing, with its error, after its retries', async () => {
    const broken = chatTrace('support-bot', 'ALWAYS-FAIL: what is the capital of France?', 'Paris.')
    await send(broken)
    const failed = await waitFor(
      'the failed judgment',
      async () => {
        const { judgments } = (await api('GET', `/api/evaluators/${evaluatorId}/judgments?status=failed`)).body
        return judgments.length === 1 ? judgments[0] : undefined
      },
      30_000,
    )
    assert.equal(failed.traceId, broken.traceId)
    assert.equal(failed.attempts, 3)
    assert.equal(failed.error, 'the judge answered 500')
    assert.deepEqual([failed.inputTokens, failed.outputTokens, failed.costUsd], [null, null, null], 'a 500 used nothing')
    assert.deepEqual(await scoresOf(broken.traceId), [])
  })

  it('counts the tokens and cost of every call of a failed judgment, and stores each as a judge span of the project', async () => {
    const prose = chatTrace('support-bot', 'NOT-JSON: what is the capital of France?', 'Paris.')
    await send(prose)
    const failed = await waitFor(
      'the judgment answered in prose to fail',
      async () => {
        const { judgments } = (await api('GET', `/api/evaluators/${evaluatorId}/judgments?status=failed`)).body
        return (judgments as Array<Record<string, unknown>>).find((judgment) => judgment.traceId === prose.traceId)
      },
      30_000,
    )
    assert.equal(failed.attempts, 3)
    assert.match(failed.error as string, /^the judge's answer is not JSON: /)
    // Three attempts, each one call answered with usage: all of it counts.
    assert.deepEqual([failed.inputTokens, failed.outputTokens], [360, 60])
    const { rows } = await sql<{ origin: unknown; input_tokens: string; status_code: number; total_cost_usd: string }>`
      select attributes->'tracewell.origin' as origin, input_tokens, status_code, total_cost_usd, service_name from spans
      where project_id = 'support' and attributes->'tracewell.judgment.id' = ${JSON.stringify({ stringValue: failed.id })}::jsonb`.execute(app.db)
    assert.deepEqual(rows.map((row) => [row.origin, Number(row.input_tokens), row.status_code]), Array(3).fill([{ stringValue: 'judge' }, 120, 2]))
    const spanCost = rows.reduce((sum, row) => sum + Number(row.total_cost_usd), 0)
    assert.ok(spanCost > 0 && Math.abs(spanCost - (failed.costUsd as number)) < 1e-9, `${spanCost} vs ${String(failed.costUsd)}`)
    // The evaluator's totals take the failed judgment's calls in.
    const stats = (await api('GET', `/api/evaluators/${evaluatorId}`)).body
    assert.deepEqual([stats.judge.inputTokens, stats.judge.outputTokens], [720, 120])
  })

  it('judges a time range on demand, old traces included, replacing its earlier scores', async () => {
    const from = new Date(Date.now() - 3_600_000).toISOString()
    const to = new Date(Date.now() + 60_000).toISOString()
    const started = await api('POST', `/api/evaluators/${evaluatorId}/runs`, { from, to })
    assert.equal(started.status, 202, JSON.stringify(started.body))
    assert.equal(started.body.status, 'queued')
    const run = await waitFor(
      'the run to complete',
      async () => {
        const { body } = await api('GET', `/api/evaluators/${evaluatorId}/runs/${started.body.id}`)
        return body.status === 'completed' ? body : undefined
      },
      30_000,
    )
    // Six support-bot traces in the window (the old one, three judged, the two failing ones); not
    // the billing one, nor the judges' own traces.
    assert.equal(run.traceCount, 6)
    assert.deepEqual(run.judgments, { pending: 0, completed: 4, failed: 2, skipped: 0 })
    const old = await scoresOf(oldTrace.traceId)
    assert.deepEqual(old.map((score) => [score.value, score.source]), [[1, 'eval']])
    // One score per evaluator and trace: the run's replaced the first.
    const all = (await api('GET', '/api/scores?source=eval&limit=500')).body.scores as Score[]
    assert.equal(all.length, 4)
    const bad = await api('POST', `/api/evaluators/${evaluatorId}/runs`, { from: to, to: from })
    assert.deepEqual([bad.status, bad.body.message], [400, 'body/from: must be before to'])
  })
})
