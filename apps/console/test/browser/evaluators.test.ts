import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { fakeModelsApiKey, freePort, startFakeModels, type FakeModels } from '@tracewell/test-support'
import type { Page } from 'playwright-core'
import { eventuallyEqual, screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import type { Stack } from '../support/stack.ts'
import type { Judgment } from '../../src/api/types.ts'
import { formatCost, formatCount } from '../../src/lib/format.ts'

// LLM-as-judge set up by a person in the console, against `npm start` and a fake OpenAI-compatible
// judge: a connection added (a refused URL shown in the API's words), tested and deleted; an
// evaluator made with a preview of its filled template on a real trace, run over past traces, its
// judgments and spend read, paused; its scores named after it on the trace.

const hex = (bytes: number) => randomBytes(bytes).toString('hex')
const string = (key: string, value: string) => ({ key, value: { stringValue: value } })

interface Seeded {
  parisTraceId: string
  emptyTraceId: string
  ownTraceId: string
}

/** Two LLM calls of `geo-bot` (one answered right, one wrong) and a trace with nothing to judge. */
async function seed(stack: Stack): Promise<Seeded> {
  const send = async (service: string, spans: object[]) => {
    const body = { resourceSpans: [{ resource: { attributes: [string('service.name', service)] }, scopeSpans: [{ scope: { name: 'seed' }, spans }] }] }
    const sent = await fetch(`${stack.url}/v1/traces`, { method: 'POST', headers: { 'x-api-key': stack.projectKey, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    assert.equal(sent.status, 200)
  }
  const now = BigInt(Date.now()) * 1_000_000n
  const llmCall = (traceId: string, ago: bigint, question: string, answer: string) => ({
    traceId, spanId: hex(8), name: 'openai.chat', kind: 3, startTimeUnixNano: String(now - ago - 700_000_000n), endTimeUnixNano: String(now - ago),
    attributes: [string('gen_ai.system', 'openai'), string('gen_ai.request.model', 'gpt-4o'), string('gen_ai.prompt.0.role', 'user'), string('gen_ai.prompt.0.content', question), string('gen_ai.completion.0.role', 'assistant'), string('gen_ai.completion.0.content', answer)],
  })
  const parisTraceId = hex(16)
  await send('geo-bot', [llmCall(hex(16), 120_000_000_000n, 'What is the capital of Spain?', 'Barcelona.'), llmCall(parisTraceId, 60_000_000_000n, 'What is the capital of France?', 'Paris.')])
  const emptyTraceId = hex(16)
  await send('geo-bot', [{ traceId: emptyTraceId, spanId: hex(8), name: 'healthcheck', kind: 1, startTimeUnixNano: String(now - 1_000_000_000n), endTimeUnixNano: String(now) }])
  // A trace as Tracewell's playground makes one: left out of the lists unless asked for.
  const ownTraceId = hex(16)
  await send('tracewell', [{ ...llmCall(ownTraceId, 90_000_000_000n, 'What is the capital of Peru?', 'Lima.'), name: 'playground', attributes: [...llmCall(ownTraceId, 0n, 'What is the capital of Peru?', 'Lima.').attributes, string('tracewell.origin', 'playground')] }])
  return { parisTraceId, emptyTraceId, ownTraceId }
}

/** The fake judge behind an endpoint that also lists its models, as a connection test asks it to. */
function startModelsEndpoint(models: FakeModels): Promise<{ url: string; server: Server }> {
  const server = createServer(async (request, response) => {
    if (request.method === 'GET' && request.url === '/v1/models') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] }))
      return
    }
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const forwarded = await fetch(`${models.url}${(request.url ?? '').replace(/^\/v1/, '')}`, { method: request.method ?? 'POST', headers: { authorization: request.headers.authorization ?? '', 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
    response.writeHead(forwarded.status, { 'content-type': 'application/json' }).end(await forwarded.text())
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server })))
}

/** What a route answers the team key with: how a test tells a contract another change builds from one not merged yet (404). */
async function answerOf(stack: Stack, method: string, path: string, body?: unknown): Promise<{ status: number; body: { message?: string } & Record<string, unknown> }> {
  const separator = path.includes('?') ? '&' : '?'
  const response = await fetch(`${stack.url}${path}${separator}project_id=${stack.projectId}`, {
    method,
    headers: { 'x-api-key': stack.teamKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: response.status, body: (await response.json()) as { message?: string } }
}

const acceptNextDialog = (page: Page) =>
  new Promise<string>((resolve) =>
    page.once('dialog', (dialog) => {
      resolve(dialog.message())
      void dialog.accept()
    }),
  )

describe('LLM connections and evaluators in the console', { timeout: 240_000 }, () => {
  let models: FakeModels
  let endpoint: { url: string; server: Server }
  before(async () => {
    models = await startFakeModels(20)
    endpoint = await startModelsEndpoint(models)
  })
  after(() => {
    endpoint?.server.close()
    models?.close()
  })
  // The judge runs on this machine: the outbound policy lets the loopback address through.
  const fx = consoleFixture(seed, { EVALUATOR_POLL_INTERVAL_MS: '250', EVALUATOR_TRACE_QUIET_MS: '500', OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' })

  it('adds a connection (a refused URL in the API’s words), tests it and deletes one after asking', async (t) => {
    const opened = await signedInConsole(fx.browser, fx.stack, [/status of 400 \(Bad Request\)/])
    const { page } = opened
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.getByRole('link', { name: 'LLM connections' }).click()
    await page.getByRole('heading', { name: 'LLM connections', level: 1 }).waitFor()
    await page.getByText('No connection yet').waitFor()

    const form = page.getByRole('form', { name: 'New connection' })
    const add = async (name: string, baseUrl: string) => {
      await form.getByLabel('Name').fill(name)
      await form.getByLabel('Base URL').fill(baseUrl)
      await form.getByLabel('API key').fill(fakeModelsApiKey)
      await form.getByRole('button', { name: 'Add connection' }).click()
    }
    const refusedUrl = 'https://user:secret@models.example.com/v1'
    const refusal = await answerOf(fx.stack, 'POST', '/api/llm-connections', { name: 'refused', provider: 'openai', baseUrl: refusedUrl, apiKey: fakeModelsApiKey })
    assert.equal(refusal.status, 400)
    assert.match(refusal.body.message ?? '', /^body\/baseUrl: /)
    await add('refused', refusedUrl)
    assert.equal(await form.getByRole('alert').textContent(), `Could not add the connection: ${refusal.body.message}`)
    await screenshot(page, 'llm-connection-refused')

    await add('local models', endpoint.url)
    await form.getByText('Added local models.').waitFor()
    // Nothing listens there: a connection that saves, and fails its test.
    const deadUrl = `http://127.0.0.1:${await freePort()}/v1`
    await add('spare', deadUrl)
    const table = page.getByRole('table', { name: 'LLM connections' })
    const rows = async () => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 3).map((td) => td.textContent)))
    const expected = [
      ['local models', endpoint.url, '…6789'],
      ['spare', deadUrl, '…6789'],
    ]
    assert.deepEqual((await eventuallyEqual(rows, expected)).sort(), expected)

    const saved = (await answerOf(fx.stack, 'GET', '/api/llm-connections')).body.llmConnections as Array<{ id: string; name: string }>
    const idOf = (name: string) => saved.find((connection) => connection.name === name)?.id as string
    const [connectionId, spareId] = [idOf('local models'), idOf('spare')]
    const testRoute = await answerOf(fx.stack, 'POST', `/api/llm-connections/${connectionId}/test`)
    if (testRoute.status === 404 && testRoute.body.message?.startsWith('Route POST')) {
      t.diagnostic('POST /api/llm-connections/:id/test is not on this server yet (helper "outbound"): the Test button is not exercised')
    } else {
      assert.equal(testRoute.status, 200)
      await table.getByRole('button', { name: 'Test local models' }).click()
      const outcome = table.getByRole('row', { name: /local models/ }).getByRole('status')
      await outcome.getByText('works', { exact: true }).waitFor()
      assert.match((await outcome.textContent()) ?? '', /^works .*200.* \([\d.]+ (ms|s)\)$/)
      assert.equal(models.requests.length, 0, 'a test only lists the models: no completion is paid for')
      await table.getByRole('button', { name: 'Test spare' }).click()
      const failed = table.getByRole('row', { name: /spare/ }).getByRole('status')
      await failed.getByText('failed', { exact: true }).waitFor()
      const answer = (await answerOf(fx.stack, 'POST', `/api/llm-connections/${spareId}/test`)).body as { ok: boolean; status: number | null; message: string }
      assert.deepEqual([answer.ok, answer.status], [false, null])
      const shown = (await failed.textContent()) ?? ''
      assert.ok(shown.startsWith(`failed ${answer.message} (`), `the API's reason is shown: ${shown}`)
    }
    await screenshot(page, 'llm-connections')

    const asked = acceptNextDialog(page)
    await table.getByRole('button', { name: 'Delete spare' }).click()
    assert.equal(await asked, 'Delete the connection spare? Its key is forgotten; an evaluator that uses it must be deleted first.')
    await table.getByRole('row', { name: /spare/ }).waitFor({ state: 'detached' })
    assert.deepEqual(((await answerOf(fx.stack, 'GET', '/api/llm-connections')).body.llmConnections as Array<{ name: string }>).map((connection) => connection.name), ['local models'])
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('makes an evaluator with a preview on a real trace, runs it over past traces, reads its judgments and spend, and pauses it', async (t) => {
    const previewRoute = await answerOf(fx.stack, 'POST', '/api/evaluators/preview', { prompt: '{{input}}', traceId: fx.seeded.parisTraceId })
    const previewBuilt = !(previewRoute.status === 404 && previewRoute.body.message?.startsWith('Route POST'))
    if (!previewBuilt) t.diagnostic('POST /api/evaluators/preview is not on this server yet (helper "judge-inputs"): the preview is not checked')
    const opened = await signedInConsole(fx.browser, fx.stack, previewBuilt ? [] : [/status of 404 \(Not Found\)/])
    const { page } = opened
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.getByRole('link', { name: 'Evaluators' }).click()
    await page.getByText('No evaluator yet').waitFor()
    await page.getByRole('link', { name: 'New evaluator' }).click()
    const form = page.getByRole('form', { name: 'New evaluator' })
    await form.getByLabel('Name', { exact: true }).fill('capital check')
    await form.getByLabel('Judge model', { exact: true }).fill('gpt-4o-mini')
    await form.getByLabel('Score name', { exact: true }).fill('correct')
    await form.getByRole('textbox', { name: 'Template' }).fill('Question: {{input}}\nExpected: Paris\nAnswer: {{output}}')
    await form.getByLabel('Service', { exact: true }).fill('geo-bot')

    const preview = page.getByRole('region', { name: 'Preview on a trace' })
    const traceChoice = preview.getByLabel('Trace to preview')
    // The newest matching trace first: the one with nothing to judge.
    assert.equal(await eventuallyEqual(() => traceChoice.inputValue(), fx.seeded.emptyTraceId), fx.seeded.emptyTraceId)
    if (previewBuilt) {
      await preview.getByText(/A judge would not be sent this trace: /).waitFor()
      await screenshot(page, 'evaluator-preview-skipped')
      await traceChoice.selectOption(fx.seeded.parisTraceId)
      const filled = preview.getByLabel('Filled template')
      const expectedPrompt = (await answerOf(fx.stack, 'POST', '/api/evaluators/preview', { prompt: 'Question: {{input}}\nExpected: Paris\nAnswer: {{output}}', traceId: fx.seeded.parisTraceId })).body.prompt as string
      assert.match(expectedPrompt, /What is the capital of France\?[\s\S]*Expected: Paris\nAnswer: [\s\S]*Paris\./)
      assert.equal(await eventuallyEqual(() => filled.textContent(), expectedPrompt), expectedPrompt)
    } else {
      await preview.getByRole('alert').waitFor()
    }
    await page.getByRole('heading', { name: 'New evaluator' }).scrollIntoViewIfNeeded()
    await screenshot(page, 'evaluator-new')
    await form.getByRole('button', { name: 'Create evaluator' }).click()

    await page.getByRole('heading', { name: 'capital check', level: 1 }).waitFor()
    await page.getByText('active', { exact: true }).waitFor()
    const evaluatorId = new URL(page.url()).pathname.split('/').at(-1) as string
    const saved = (await answerOf(fx.stack, 'GET', `/api/evaluators/${evaluatorId}`)).body
    assert.deepEqual([saved.model, saved.scoreName, saved.filter, saved.samplingRate, saved.enabled, saved.prompt], ['gpt-4o-mini', 'correct', { service: 'geo-bot' }, 1, true, 'Question: {{input}}\nExpected: Paris\nAnswer: {{output}}'])

    // The traces came before the evaluator: a run over the last 24 hours judges them.
    await page.getByRole('form', { name: 'Judge past traces' }).getByRole('button', { name: 'Start a run' }).click()
    const runs = page.getByRole('table', { name: 'Runs' })
    await runs.getByText('completed', { exact: true }).waitFor({ timeout: 60_000 })
    // Each judgment as the page shows it (trace, status, score and reasoning, tokens, cost) against the API's own figures.
    const judgments = page.getByRole('table', { name: 'Judgments' })
    const shown = async () => judgments.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1, 6).map((td) => td.textContent)))
    const stored = async () => ((await answerOf(fx.stack, 'GET', `/api/evaluators/${evaluatorId}/judgments`)).body.judgments as Judgment[])
    const settled = await eventuallyEqual(async () => (await stored()).map((judgment) => judgment.status).sort(), emptyTraceJudged(previewBuilt), 60_000)
    assert.deepEqual(settled, emptyTraceJudged(previewBuilt))
    const reasoning = (traceId: string) => (traceId === fx.seeded.parisTraceId ? '1names the expected city' : '0does not name the expected city')
    const expected = (await stored()).map((judgment) => [
      `${judgment.traceId.slice(0, 12)}…by a run`,
      judgment.status,
      judgment.status === 'completed' ? reasoning(judgment.traceId) : `—${judgment.skipReason ?? ''}${judgment.error ?? ''}`,
      `${formatCount(judgment.inputTokens)} / ${formatCount(judgment.outputTokens)}`,
      formatCost(judgment.costUsd),
    ])
    assert.deepEqual(await eventuallyEqual(shown, expected), expected)
    assert.ok(expected.some((row) => row[2] === '1names the expected city'))
    const judge = (await answerOf(fx.stack, 'GET', `/api/evaluators/${evaluatorId}`)).body.judge as { costUsd: number; inputTokens: number; outputTokens: number }
    assert.ok(judge.costUsd > 0 && judge.inputTokens > 0)
    const spend = page.getByRole('definition').first()
    assert.equal(await eventuallyEqual(() => spend.textContent(), formatCost(judge.costUsd)), formatCost(judge.costUsd))
    await screenshot(page, 'evaluator')

    await page.getByRole('button', { name: 'Pause' }).click()
    await page.getByText('paused', { exact: true }).waitFor()
    assert.equal((await answerOf(fx.stack, 'GET', `/api/evaluators/${evaluatorId}`)).body.enabled, false)

    await page.getByRole('link', { name: '← Evaluators' }).click()
    const list = page.getByRole('table', { name: 'Evaluators' })
    await list.getByRole('link', { name: 'capital check' }).waitFor()
    const listed = await list.locator('tbody tr td').allTextContents()
    assert.deepEqual(listed.slice(0, 4), ['capital check', 'paused', 'correct', 'gpt-4o-minivia local models'])
    assert.equal(listed[5], `${formatCost(judge.costUsd)} · ${formatCount(judge.inputTokens)} in / ${formatCount(judge.outputTokens)} out`)
    await list.getByRole('button', { name: 'Resume capital check' }).click()
    await list.getByText('active').waitFor()
    await screenshot(page, 'evaluators')

    // The judge's score on the trace reads as the evaluator's name, not evaluator:<id>.
    await page.goto(`/traces/${fx.seeded.parisTraceId}?project_id=${fx.stack.projectId}`)
    const given = page.getByRole('list', { name: /Given scores of/ }).first()
    await given.getByRole('link', { name: 'capital check' }).waitFor()
    assert.equal(await given.getByText(`evaluator:${evaluatorId}`).count(), 0)
    await screenshot(page, 'trace-judge-score')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('leaves Tracewell’s own calls out of traces, sessions and usage until the switch asks for them, badged', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.setViewportSize({ width: 1280, height: 800 })
    /** The query of the next request to `path` that `act` causes. */
    const queryOf = async (path: string, act: () => Promise<unknown>) => {
      const request = page.waitForRequest((candidate) => new URL(candidate.url()).pathname === path)
      await act()
      return new URL((await request).url()).searchParams
    }
    const ownRow = page.getByRole('row', { name: /playground/ })

    let query = await queryOf('/api/traces', () => page.goto(`/traces?project_id=${fx.stack.projectId}`))
    assert.equal(query.get('include_tracewell_calls'), null)
    await page.getByRole('row', { name: /healthcheck/ }).waitFor()
    assert.equal(await ownRow.count(), 0)
    const toggle = page.getByRole('switch', { name: 'Show Tracewell’s own calls' })
    query = await queryOf('/api/traces', () => toggle.click())
    assert.equal(query.get('include_tracewell_calls'), 'true')
    assert.equal(new URL(page.url()).searchParams.get('include_tracewell_calls'), 'true')
    await ownRow.getByText('Tracewell', { exact: true }).waitFor()
    await screenshot(page, 'traces-own-calls')
    // Off again: the list without them (the answer read before, kept by the page).
    await toggle.click()
    await ownRow.waitFor({ state: 'detached' })
    assert.equal(await toggle.isChecked(), false)
    assert.equal(new URL(page.url()).searchParams.get('include_tracewell_calls'), null)

    query = await queryOf('/api/sessions', () => page.getByRole('link', { name: 'Sessions' }).click())
    assert.equal(query.get('include_tracewell_calls'), null)
    // Tracewell's own calls carry no session of their own: the switch only widens what is asked.
    query = await queryOf('/api/sessions', () => page.getByRole('switch', { name: 'Show Tracewell’s own calls' }).click())
    assert.equal(query.get('include_tracewell_calls'), 'true')

    // Usage counts the application's three traces, then Tracewell's own with them: the seeded
    // playground trace and a trace per judgment the earlier tests' judges made.
    const traces = page.locator('.totals .card', { has: page.getByRole('term').filter({ hasText: 'Traces' }) }).locator('dd').first()
    query = await queryOf('/api/usage', () => page.getByRole('link', { name: 'Usage' }).click())
    assert.equal(query.get('include_tracewell_calls'), null)
    assert.equal(await eventuallyEqual(() => traces.textContent(), '3'), '3')
    const own = await answerOf(fx.stack, 'GET', '/api/traces?service=tracewell&include_tracewell_calls=true&limit=500')
    const withOwn = String(3 + (own.body.traces as unknown[]).length)
    assert.ok(Number(withOwn) >= 4, 'the seeded playground trace is among them')
    query = await queryOf('/api/usage', () => page.getByRole('switch', { name: 'Show Tracewell’s own calls' }).click())
    assert.equal(query.get('include_tracewell_calls'), 'true')
    assert.equal(await eventuallyEqual(() => traces.textContent(), withOwn), withOwn)
    await page.locator('figure.chart svg.recharts-surface').first().waitFor()
    await screenshot(page, 'usage-own-calls')
    assertNoProblems(opened)
    await opened.context.close()
  })
})

/**
 * The statuses of the three judgments: the trace with no input or output is skipped with a reason
 * once judges refuse what holds nothing to judge ("judge-inputs", with the preview); before that
 * it was judged like the others.
 */
function emptyTraceJudged(skipsEmpty: boolean): string[] {
  return skipsEmpty ? ['completed', 'completed', 'skipped'] : ['completed', 'completed', 'completed']
}
