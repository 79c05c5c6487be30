import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { fakeModelsApiKey, startFakeModels, type FakeModels } from '@tracewell/test-support'
import { eventuallyEqual, screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import type { Stack } from '../support/stack.ts'

// Datasets, experiments and the playground in the console, against `npm start` and a fake
// OpenAI-compatible model (the model under test and the judge): a dataset built from a trace, a
// span and a JSONL upload; two prompt versions run over it with an evaluator, compared, and the
// better one promoted; the playground run streamed and saved as a new version.

const hex = (bytes: number) => randomBytes(bytes).toString('hex')

interface Seeded {
  traceIds: string[]
  promptsetId: string
}

async function seed(stack: Stack, models: FakeModels): Promise<Seeded> {
  const api = async (method: string, path: string, body: unknown) => {
    // Connections, evaluators and experiments spend the project's provider key: the team key sets them up.
    const response = await fetch(`${stack.url}${path}?project_id=${stack.projectId}`, { method, headers: { 'x-api-key': stack.teamKey, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const answer = (await response.json()) as Record<string, unknown>
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`)
    return answer
  }
  const traceIds: string[] = []
  for (const [question, answer] of [['What is the capital of France?', 'Paris.'], ['What is the capital of Germany?', 'Berlin.']] as const) {
    const traceId = hex(16)
    traceIds.push(traceId)
    const now = BigInt(Date.now()) * 1_000_000n
    const string = (key: string, value: string) => ({ key, value: { stringValue: value } })
    const span = {
      traceId, spanId: hex(8), name: 'openai.chat', kind: 3, startTimeUnixNano: String(now - 700_000_000n), endTimeUnixNano: String(now),
      attributes: [string('gen_ai.system', 'openai'), string('gen_ai.request.model', 'gpt-4o'), string('gen_ai.prompt.0.role', 'user'), string('gen_ai.prompt.0.content', question), string('gen_ai.completion.0.role', 'assistant'), string('gen_ai.completion.0.content', answer)],
    }
    const body = { resourceSpans: [{ resource: { attributes: [string('service.name', 'geo-bot')] }, scopeSpans: [{ scope: { name: 'seed' }, spans: [span] }] }] }
    const sent = await fetch(`${stack.url}/v1/traces`, { method: 'POST', headers: { 'x-api-key': stack.projectKey, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    assert.equal(sent.status, 200)
  }
  const connection = await api('POST', '/api/llm-connections', { name: 'local models', provider: 'openai', baseUrl: models.url, apiKey: fakeModelsApiKey })
  await api('POST', '/api/score-configs', { name: 'correct', dataType: 'numeric', minValue: 0, maxValue: 1 })
  await api('POST', '/api/evaluators', {
    name: 'expected city', connectionId: connection.id, model: 'gpt-4o-mini', scoreName: 'correct', enabled: false,
    prompt: 'Question: {{input}}\nExpected: {{expected_output}}\nAnswer: {{output}}',
  })
  const promptset = await api('POST', '/api/promptsets', { name: 'geo-answer' })
  await api('POST', `/api/promptsets/${promptset.id}/prompts`, { value: 'Tell me: {{input}}', model: 'gpt-4o-mini', live: true })
  await api('POST', `/api/promptsets/${promptset.id}/prompts`, { value: JSON.stringify([{ role: 'system', content: 'Reply with the city only.' }, { role: 'user', content: '{{input}}' }]), model: 'gpt-4o-mini', note: 'city only' })
  return { traceIds, promptsetId: promptset.id as string }
}

describe('datasets, experiments and the playground in the console', { timeout: 240_000 }, () => {
  let models: FakeModels
  before(async () => {
    models = await startFakeModels(60)
  })
  after(() => models?.close())
  const fx = consoleFixture((stack) => seed(stack, models), { EVALUATOR_POLL_INTERVAL_MS: '250', EXPERIMENT_CONCURRENCY: '3', OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' })
  let datasetPath = ''

  it('builds a dataset from a trace, a span and a JSONL upload, and downloads it', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    const [france, germany] = fx.seeded.traceIds as [string, string]
    await page.goto(`/traces/${france}?project_id=${fx.stack.projectId}`)
    await page.getByRole('button', { name: 'Add trace to dataset' }).click()
    const form = page.getByRole('form', { name: 'Add this trace to a dataset' })
    await form.getByLabel('Dataset').selectOption({ label: 'New dataset…' })
    await form.getByLabel('Name').fill('capitals')
    await form.getByRole('button', { name: 'Add', exact: true }).click()
    await form.getByText(/Added as item .* \(version 1\)/).waitFor()

    // The other trace's LLM span, from the span panel, into the same dataset.
    await page.goto(`/traces/${germany}?project_id=${fx.stack.projectId}`)
    await page.getByRole('button', { name: 'Add span to dataset' }).click()
    const spanForm = page.getByRole('form', { name: 'Add this span to a dataset' })
    await spanForm.getByRole('button', { name: 'Add', exact: true }).click()
    await spanForm.getByText(/\(version 2\)/).waitFor()
    await screenshot(page, 'add-span-to-dataset')
    await spanForm.getByRole('link', { name: 'Open the dataset' }).click()
    await page.getByRole('heading', { name: 'capitals', level: 1 }).waitFor()
    datasetPath = new URL(page.url()).pathname

    const jsonl = ['Italy', 'Spain', 'Japan'].map((country, index) => JSON.stringify({ id: `upload-${index}`, input: `What is the capital of ${country}?`, expectedOutput: ['Rome', 'Madrid', 'Tokyo'][index] })).join('\n')
    await page.getByLabel('Upload a JSONL file of items').setInputFiles({ name: 'more.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(jsonl) })
    await page.getByText('Added 3 items: version 3.').waitFor()
    const table = page.getByRole('table', { name: 'Items of version 3' })
    const rows = async () => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent)))
    const expected = [
      ['user: What is the capital of France?', 'Paris.', 'trace', 'v1'],
      ['user: What is the capital of Germany?', 'Berlin.', 'span', 'v2'],
      ['What is the capital of Italy?', 'Rome', '—', 'v3'],
      ['What is the capital of Spain?', 'Madrid', '—', 'v3'],
      ['What is the capital of Japan?', 'Tokyo', '—', 'v3'],
    ]
    assert.deepEqual(await eventuallyEqual(rows, expected), expected)
    await screenshot(page, 'dataset')

    // An earlier version reads as it was.
    await page.getByLabel('Dataset version').selectOption('1')
    await page.getByRole('table', { name: 'Items of version 1' }).waitFor()
    assert.equal(await page.getByRole('table', { name: 'Items of version 1' }).locator('tbody tr').count(), 1)
    await page.getByLabel('Dataset version').selectOption('3')

    const download = page.waitForEvent('download')
    await page.getByRole('link', { name: 'Download JSONL' }).click()
    const file = await (await download).path()
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { input: unknown; expectedOutput?: unknown; sourceTraceId?: string })
    assert.deepEqual(lines.map((line) => line.expectedOutput), ['Paris.', 'Berlin.', 'Rome', 'Madrid', 'Tokyo'])
    assert.equal(lines[0]?.sourceTraceId, france)
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('runs two prompt versions as experiments, compares them item by item, and promotes the better', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.goto(`${datasetPath}?project_id=${fx.stack.projectId}`)
    const run = page.getByRole('form', { name: 'Run an experiment' })
    for (const version of ['1', '2']) {
      await run.getByLabel('Version', { exact: true }).selectOption(version)
      await run.getByLabel('expected city').check()
      await run.getByRole('button', { name: 'Run experiment' }).click()
      await run.getByText(new RegExp(`Started “geo-answer v${version} · gpt-4o-mini” over 5 items`)).waitFor()
    }
    const experiments = page.getByRole('table', { name: 'Experiments' })
    const statuses = async () => experiments.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.querySelectorAll('td')[2]?.textContent, tr.querySelectorAll('td')[3]?.textContent]))
    const done = [['completed', 'correct 1.00'], ['completed', 'correct 0.00']]
    assert.deepEqual(await eventuallyEqual(statuses, done, 60_000), done)
    await screenshot(page, 'dataset-experiments')

    await experiments.getByLabel('Compare geo-answer v1 · gpt-4o-mini').check()
    await experiments.getByLabel('Compare geo-answer v2 · gpt-4o-mini').check()
    await page.getByRole('button', { name: 'Compare 2 selected' }).click()
    await page.getByRole('heading', { name: 'Compare experiments' }).waitFor()
    const summary = page.getByRole('table', { name: 'Experiments compared' })
    await summary.locator('tbody tr').nth(1).waitFor()
    // The first chosen (v1) is the baseline; v2 is compared to it.
    const scoreCells = await summary.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.querySelectorAll('td')[2]?.textContent))
    assert.deepEqual(scoreCells, ['0.00 ', '1.00 +1.00'])
    const grid = page.getByRole('table', { name: 'Outputs item by item' })
    const firstRow = await grid.getByRole('row').nth(1).getByRole('cell').allTextContents()
    assert.match(firstRow[0] ?? '', /What is the capital of France\?.*expected Paris\./s)
    assert.match(firstRow[1] ?? '', /^It is a large and famous city\.correct 0/)
    assert.match(firstRow[2] ?? '', /^Paris\.correct 1 \+1\.00/)
    await screenshot(page, 'experiment-comparison')

    // Promoting asks first, saying what moves; declined, nothing moves.
    const production = async () => {
      const answer = (await (await fetch(`${fx.stack.url}/api/promptsets/${fx.seeded.promptsetId}/labels`, { headers: { 'x-api-key': fx.stack.projectKey } })).json()) as { labels: Array<{ name: string; version: number }> }
      return answer.labels.find((label) => label.name === 'production')?.version
    }
    const question = 'Move the production label of the prompt “geo-answer” from v1 to v2? Applications that read production get v2 from then on.'
    assert.equal(await summary.getByRole('button', { name: 'Promote v1 to production' }).count(), 0, 'the version in production is marked, not offered')
    const declined = new Promise<string>((resolve) => page.once('dialog', (dialog) => (resolve(dialog.message()), void dialog.dismiss())))
    await summary.getByRole('button', { name: 'Promote v2 to production' }).click()
    assert.equal(await declined, question)
    assert.equal(await production(), 1)
    const accepted = new Promise<string>((resolve) => page.once('dialog', (dialog) => (resolve(dialog.message()), void dialog.accept())))
    await summary.getByRole('button', { name: 'Promote v2 to production' }).click()
    assert.equal(await accepted, question)
    await page.getByText('geo-answer: production now points at v2 (was v1).').waitFor()
    assert.equal(await production(), 2)
    await screenshot(page, 'experiment-promoted')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('runs a prompt version in the playground, streamed, and saves the messages as a new version', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.getByRole('link', { name: 'Playground' }).click()
    await page.getByRole('heading', { name: 'Playground' }).waitFor()
    await page.getByLabel('Prompt registry', { exact: true }).selectOption({ label: 'geo-answer' })
    await page.getByLabel('Version', { exact: true }).selectOption('2')
    await eventuallyEqual(() => page.getByLabel('Message 1', { exact: true }).inputValue(), 'Reply with the city only.')
    await page.getByRole('textbox', { name: 'input' }).fill('What is the capital of Peru?')
    await page.getByRole('button', { name: 'Run', exact: true }).click()
    const output = page.locator('.output-text')
    assert.equal(await eventuallyEqual(() => output.textContent(), 'Lima.'), 'Lima.')
    await page.getByText('42 in · 8 out').waitFor()
    await screenshot(page, 'playground')
    const sent = models.requests.at(-1)?.body
    assert.deepEqual([sent?.stream, sent?.messages.map((message) => message.content)], [true, ['Reply with the city only.', 'What is the capital of Peru?']])

    // Edited, run again as written, then kept as the promptset's next version.
    await page.getByLabel('Message 1', { exact: true }).fill('Reply with the city only, in capitals.')
    await page.getByLabel('Temperature').fill('0.5')
    await page.getByRole('button', { name: 'Run', exact: true }).click()
    await page.getByText('42 in · 8 out').waitFor()
    assert.equal(models.requests.at(-1)?.body.temperature, 0.5)
    const save = page.getByRole('form', { name: 'Save as a new prompt version' })
    await save.getByRole('button', { name: 'Save version' }).click()
    await save.getByText('Saved as version 3.').waitFor()
    await save.scrollIntoViewIfNeeded()
    await screenshot(page, 'playground-saved')
    const promptset = (await (await fetch(`${fx.stack.url}/api/promptsets/${fx.seeded.promptsetId}`, { headers: { 'x-api-key': fx.stack.projectKey } })).json()) as { prompts: Array<{ version: number; value: string; modelSettings: Record<string, unknown> }> }
    const saved = promptset.prompts.find((prompt) => prompt.version === 3)
    assert.deepEqual([JSON.parse(saved?.value ?? '[]')[0], saved?.modelSettings], [{ role: 'system', content: 'Reply with the city only, in capitals.' }, { temperature: 0.5 }])

    // Each run is a trace.
    await page.getByRole('link', { name: 'Open the trace' }).click()
    await page.getByRole('heading', { name: 'playground', exact: true, level: 1 }).waitFor()
    await screenshot(page, 'playground-trace')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
