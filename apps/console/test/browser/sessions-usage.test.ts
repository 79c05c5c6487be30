import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { eventuallyEqual, screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { seedScenario } from '../support/scenario.ts'
import { consoleFixture } from '../support/console-fixture.ts'

describe('sessions and usage in the console', () => {
  const fx = consoleFixture((stack) => seedScenario(stack.url, stack.projectKey))

  it('lists sessions, and shows one as a conversation across its traces, oldest first', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.getByRole('link', { name: 'Sessions' }).click()
    const table = page.getByRole('table', { name: 'Sessions' })
    await table.locator('tbody tr').nth(1).waitFor()
    const cells = async () => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)))
    const listed = await cells()
    assert.deepEqual(listed.map((row) => [row[0], row[1], row[4], row[5]]), [
      ['session-77', 'user-9', '1', '812'],
      ['session-42', 'user-7', '3', '381'],
    ])
    await screenshot(page, 'sessions')

    await page.getByLabel('User').fill('user-7')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/user=user-7/)
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Sessions"] tbody tr').length === 1)

    await page.getByRole('link', { name: 'session-42' }).click()
    await page.getByRole('heading', { name: 'Session session-42' }).waitFor()
    const turns = page.getByRole('list', { name: "The session's traces, oldest first" }).locator(':scope > li')
    // Each trace's messages load on their own: wait for all three.
    await page.waitForFunction(() => document.querySelectorAll('.session-turn .messages').length === 3)
    const userMessages = await page.locator('.message.role-user .message-text').allTextContents()
    assert.deepEqual(userMessages, ['How do I reset my password?', 'The e-mail never came.', 'Found it, thanks!'])
    assert.equal(await turns.count(), 3)
    const firstTurnLink = await turns.first().locator('.turn-head a').getAttribute('href')
    assert.equal(firstTurnLink, `/traces/${fx.seeded.supportTraceIds[0]}?project_id=${fx.stack.projectId}`)
    assert.equal(await page.locator('.summary-strip dd').nth(0).textContent(), 'user-7')
    await screenshot(page, 'session')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('charts cost, tokens, traces and errors over time with totals, split by model', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.getByRole('link', { name: 'Usage' }).click()
    const totals = page.getByRole('definition')
    await page.getByText('LLM call latency p50 / p95').waitFor()
    const figure = async (term: string) => page.locator('.totals .card', { has: page.getByRole('term').filter({ hasText: term }) }).locator('dd').first().textContent()
    assert.equal(await figure('Traces'), '5')
    assert.equal(await figure('Tokens in / out'), `${(96 * 3 + 812 + 1_200 + 1_201 + 1_202).toLocaleString('en-US')} / ${31 * 3 + 120}`)
    assert.ok((await totals.count()) >= 5)
    const charts = page.locator('figure.chart')
    await charts.nth(4).locator('svg.recharts-surface').waitFor()
    assert.deepEqual(await charts.locator('figcaption').allTextContents(), ['Cost', 'Input tokens', 'Output tokens', 'Traces', 'Spans with an error'])
    // Every day of the last 7 has its bar, the quiet ones empty: from the day 7 days ago to today.
    const costTable = charts.first().locator('details.chart-table')
    await costTable.locator('summary').click()
    const pad = (n: number) => String(n).padStart(2, '0')
    const days = Array.from({ length: 8 }, (_, i) => {
      const start = new Date(Date.now() - 7 * 86_400_000)
      const day = new Date(start.getFullYear(), start.getMonth(), start.getDate() + i)
      return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}`
    })
    assert.deepEqual(await costTable.locator('tbody th').allTextContents(), days)
    // The chart draws the table's rows: the days with no cost are there, at $0.
    const costs = await costTable.locator('tbody td').allTextContents()
    assert.equal(costs.length, 8)
    assert.ok(costs.filter((cost) => cost === '$0').length >= 6, `quiet days at $0: ${costs.join(', ')}`)
    await costTable.locator('summary').click()
    await screenshot(page, 'usage')

    // The card counts spans (the root and the call of the failed billing chat); its link lists the
    // traces with an error: one.
    assert.equal(await figure('Spans with an error'), '2')
    await page.getByRole('link', { name: 'Traces with an error →' }).click()
    await page.waitForURL(/status=error/)
    assert.match(page.url(), /range=7d/)
    const listed = page.locator('table.grid tbody tr')
    await listed.first().waitFor()
    await page.waitForFunction(() => document.querySelectorAll('table.grid tbody tr').length === 1)
    assert.deepEqual(await page.locator('table.grid tbody tr td:nth-child(2)').allTextContents(), ['POST /invoice/explain'])
    assert.equal(await page.getByLabel('Status').locator('option:checked').textContent(), 'Traces with an error')
    await page.getByRole('link', { name: 'Usage' }).click()
    await page.getByText('LLM call latency p50 / p95').waitFor()
    await charts.nth(4).locator('svg.recharts-surface').waitFor()

    await page.getByLabel('Split by').selectOption('model')
    await page.waitForURL(/group_by=model/)
    const legend = charts.first().locator('.recharts-legend-item-text')
    // The legend of the unsplit series stays until the split's answer arrives: wait for the new one.
    // Spans without a model (the HTTP handlers) are their own share.
    const expected = ['(none)', 'claude-sonnet-4', 'gpt-4o', 'gpt-4o-mini']
    assert.deepEqual(await eventuallyEqual(async () => (await legend.allTextContents()).sort(), expected), expected)
    // Each chart has its figures as a table too, for screen readers.
    const inputTable = charts.nth(1).locator('details.chart-table')
    await inputTable.locator('summary').click()
    const header = await inputTable.locator('thead th').allTextContents()
    assert.deepEqual(header.slice(1).sort(), ['(none)', 'claude-sonnet-4', 'gpt-4o', 'gpt-4o-mini'])
    // Traces counted per model add up to more than the 5 traces (a trace is under each model it
    // called and under "(none)" for its root): side by side with a note, not stacked as a total.
    const traces = charts.nth(3)
    assert.equal(await traces.locator('.chart-note').count(), 1)
    assert.equal(await charts.nth(0).locator('.chart-note').count(), 0, 'cost adds up across models')
    await screenshot(page, 'usage-by-model')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
