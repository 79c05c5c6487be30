// npm run bench:experiments — how long an experiment takes over a dataset, against a model that
// answers after a fixed delay, at EXPERIMENT_CONCURRENCY 1 and 4, in one run on this machine.
//
// The baseline is the serial ideal measured in the same run: items × the model's measured delay
// (one call after another, no Tracewell in between). Printed: each run's wall time from the
// POST to `completed`, its ratio to the ideal at its concurrency (ideal ÷ concurrency), and the
// speed-up of 4 over 1. The runs are `npm start` in process (the worker, its queue in process,
// the scheduler polling every 100 ms) over the local Postgres, in a fresh database each.
import { randomBytes, randomUUID } from 'node:crypto'
import { AllInOneConfigSchema, loadConfig } from '@tracewell/config'
import { buildAllInOneApp } from '@tracewell/all-in-one'
import { createTestDatabase } from '@tracewell/db/testing'
import { fakeModelsApiKey, startFakeModels } from '@tracewell/test-support'

const items = 40
const delayMs = 100
const pollMs = 100

async function runOnce(concurrency: number): Promise<{ ms: number; maxInFlight: number }> {
  const models = await startFakeModels(delayMs)
  const modelsUrl = models.url
  const database = await createTestDatabase()
  const projectKey = `tw_proj_${randomBytes(24).toString('hex')}`
  const teamKey = `tw_team_${randomBytes(24).toString('hex')}`
  const { app } = await buildAllInOneApp(
    loadConfig(AllInOneConfigSchema, {
      DATABASE_URL: database.url,
      DATA_DIR: `/tmp/tracewell-bench-${randomUUID()}`,
      LOG_LEVEL: 'warn',
      GRPC_PORT: '0',
      INIT_TEAM_NAME: 'bench',
      INIT_TEAM_API_KEY: teamKey,
      INIT_PROJECT_NAME: 'bench',
      INIT_PROJECT_ID: 'bench',
      INIT_PROJECT_API_KEY: projectKey,
      LLM_CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      EVALUATOR_POLL_INTERVAL_MS: String(pollMs),
      EXPERIMENT_CONCURRENCY: String(concurrency),
      // The fake models listen on loopback, which the outbound policy refuses unless allowed.
      OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32',
    }),
  )
  try {
    const api = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
      // A prompt experiment spends the project's connection: the team key sets it up.
      const response = await app.inject({ method, url: `${url}${url.includes('?') ? '&' : '?'}project_id=bench`, headers: { 'x-api-key': teamKey, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) })
      if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
      return response.json() as Record<string, unknown>
    }
    const dataset = await api('POST', '/api/datasets', { name: 'bench' })
    await api('POST', `/api/datasets/${dataset.id}/items`, { items: Array.from({ length: items }, (_, index) => ({ input: `What is the capital of country ${index}?` })) })
    const connection = await api('POST', '/api/llm-connections', { name: 'models', provider: 'openai', baseUrl: modelsUrl, apiKey: fakeModelsApiKey })
    const registry = await api('POST', '/api/promptsets', { name: 'bench' })
    await api('POST', `/api/promptsets/${registry.id}/prompts`, { value: 'Answer: {{input}}', model: 'gpt-4o-mini' })
    const started = performance.now()
    const experiment = await api('POST', '/api/experiments', { datasetId: dataset.id, promptsetId: registry.id, version: 1, connectionId: connection.id })
    for (;;) {
      const state = await api('GET', `/api/experiments/${experiment.id}`)
      if (state.status === 'completed') {
        const { results } = state.aggregates as { results: { completed: number } }
        if (results.completed !== items) throw new Error(`only ${results.completed} of ${items} items completed`)
        return { ms: performance.now() - started, maxInFlight: models.maxInFlight }
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  } finally {
    await app.close()
    await database.drop()
    models.close()
  }
}

const models = await startFakeModels(delayMs)
try {
  // The baseline: the model's own delay, measured on this machine (one direct call at a time).
  const direct: number[] = []
  for (let index = 0; index < 10; index++) {
    const started = performance.now()
    await fetch(`${models.url}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${fakeModelsApiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }) })
    direct.push(performance.now() - started)
  }
  const callMs = direct.reduce((sum, ms) => sum + ms, 0) / direct.length
  const serialIdealMs = items * callMs
  const results: Array<[number, { ms: number; maxInFlight: number }]> = []
  for (const concurrency of [1, 4]) results.push([concurrency, await runOnce(concurrency)])
  console.log(`${items} items, the model answering in ${callMs.toFixed(0)} ms (measured): serial ideal ${serialIdealMs.toFixed(0)} ms`)
  for (const [concurrency, { ms, maxInFlight }] of results) {
    const ideal = serialIdealMs / concurrency
    console.log(
      `EXPERIMENT_CONCURRENCY=${concurrency}: ${ms.toFixed(0)} ms, ${(ms / ideal).toFixed(2)}× its ideal (${ideal.toFixed(0)} ms), ` +
        `${((ms - ideal) / items).toFixed(1)} ms of Tracewell per item; most calls at once: ${maxInFlight}`,
    )
  }
  const one = results[0]?.[1].ms ?? NaN
  const four = results[1]?.[1].ms ?? NaN
  console.log(`speed-up of 4 over 1: ${(one / four).toFixed(2)}×`)
} finally {
  models.close()
}
