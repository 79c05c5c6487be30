import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SpanKind } from '@opentelemetry/api'
import { screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { sendTraces, timedSpan } from '../support/seed.ts'
import type { Stack } from '../support/stack.ts'

interface ListedTrace {
  traceId: string
  costUsd: number | null
}

/** The trace list as the API answers it, once it holds `count` traces (summaries follow the spans). */
async function listedTraces(stack: Stack, count: number): Promise<ListedTrace[]> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const response = await fetch(`${stack.url}/api/traces`, { headers: { 'x-api-key': stack.projectKey } })
    const traces = response.ok ? ((await response.json()) as { traces: ListedTrace[] }).traces : []
    if (traces.length === count) return traces
    if (Date.now() > deadline) throw new Error(`the trace list holds ${traces.length} traces after 30 s, not ${count}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('model prices in the console', () => {
  // Nothing is sent before the price exists: the writer has no price of this project cached.
  const fx = consoleFixture()

  it('adds a price that costs the next spans, shows the cost in significant digits, edits and deletes it', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.getByRole('link', { name: 'Settings' }).click()
    const prices = page.getByRole('table', { name: 'Model prices' })
    await prices.getByText("No price of this project's own").waitFor()

    const form = page.getByRole('form', { name: 'Add a model price' })
    await form.getByLabel('Model').fill('house-llm')
    await form.getByLabel('Input $/1M').fill('1.5')
    await form.getByLabel('Output $/1M').fill('2')
    await form.getByRole('button', { name: 'Add price' }).click()
    await page.getByRole('status').filter({ hasText: 'Added the price of house-llm.' }).waitFor()
    const row = prices.locator('tbody tr', { hasText: 'house-llm' })
    assert.deepEqual(await row.locator('td').evaluateAll((cells) => cells.slice(0, 7).map((cell) => cell.textContent)), ['house-llm', '$1.50', '$2.00', 'as input', 'as input', 'as output', 'always'])

    // A call of that model: 82 tokens in at $1.50/M and 41 out at $2/M cost $0.000205.
    await sendTraces(fx.stack.url, fx.stack.projectKey, 'house-app', (tracer) => {
      const start = Date.now() - 30_000
      const call = timedSpan(tracer, 'chat house-llm', start, start + 800, {
        kind: SpanKind.CLIENT,
        attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'house-llm', 'gen_ai.usage.input_tokens': 82, 'gen_ai.usage.output_tokens': 41 },
      })
      call.end()
    })
    const [trace] = await listedTraces(fx.stack, 1)
    assert.ok(Math.abs((trace?.costUsd ?? 0) - 0.000205) < 1e-12, `priced with the project's price: ${trace?.costUsd}`)
    await page.goto(`/traces?project_id=${fx.stack.projectId}`)
    const cost = page.locator('table.grid tbody tr').first().locator('td').nth(7)
    await cost.filter({ hasText: '$' }).waitFor()
    assert.equal(await cost.textContent(), '$0.000205')
    assert.equal(await cost.locator('span').getAttribute('title'), '$0.000205')
    await screenshot(page, 'traces-small-cost')

    // Changed in place: a pattern, with a cache-read price and a start date.
    await page.getByRole('link', { name: 'Settings' }).click()
    await page.getByRole('button', { name: 'Edit the price of house-llm' }).click()
    const edit = page.getByRole('form', { name: 'Change the price of house-llm' })
    await edit.getByLabel('Model').fill('house-llm-*')
    await edit.getByLabel('Match').selectOption('glob')
    await edit.getByLabel('Input $/1M').fill('0.8')
    await edit.getByLabel('Cache read $/1M').fill('0.08')
    await edit.getByLabel('From (optional)').fill('2026-12-01T09:30')
    await edit.getByRole('button', { name: 'Save price' }).click()
    await page.getByRole('status').filter({ hasText: 'Changed the price of house-llm-*.' }).waitFor()
    const changed = prices.locator('tbody tr', { hasText: 'house-llm-*' })
    assert.deepEqual(await changed.locator('td').evaluateAll((cells) => cells.slice(0, 7).map((cell) => cell.textContent)), [
      'house-llm-*pattern',
      '$0.80',
      '$2.00',
      '$0.08',
      'as input',
      'as output',
      '2026-12-01 09:30:00',
    ])
    const stored = (await (await fetch(`${fx.stack.url}/api/projects/${fx.stack.projectId}/model-prices`, { headers: { 'x-api-key': fx.stack.teamKey } })).json()) as { modelPrices: Array<Record<string, unknown>> }
    assert.equal(stored.modelPrices.length, 1, 'changed, not added')
    assert.deepEqual([stored.modelPrices[0]?.model, stored.modelPrices[0]?.match, stored.modelPrices[0]?.usdPerMillionTokens], [
      'house-llm-*',
      'glob',
      { input: 0.8, output: 2, cacheRead: 0.08, cacheWrite: null, reasoning: null },
    ])
    assert.equal(new Date(stored.modelPrices[0]?.effectiveFrom as string).getTime(), new Date(2026, 11, 1, 9, 30).getTime(), 'the browser’s local time')
    await screenshot(page, 'settings-model-prices')

    // Deleted, after a confirmation.
    page.once('dialog', (dialog) => void dialog.accept())
    await page.getByRole('button', { name: 'Delete the price of house-llm-*' }).click()
    await prices.getByText("No price of this project's own").waitFor()
    assertNoProblems(opened)
    await opened.context.close()
  })
})
