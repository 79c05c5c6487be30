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
    await page.getByText('Latency p50 / p95').waitFor()
    const figure = async (term: string) => page.locator('.totals .card', { hasText: term }).locator('dd').textContent()
    assert.equal(await figure('Traces'), '5')
    assert.equal(await figure('Tokens in / out'), `${(96 * 3 + 812 + 1_200 + 1_201 + 1_202).toLocaleString('en-US')} / ${31 * 3 + 120}`)
    assert.ok((await totals.count()) >= 5)
    const charts = page.locator('figure.chart')
    await charts.nth(4).locator('svg.recharts-surface').waitFor()
    assert.deepEqual(await charts.locator('figcaption').allTextContents(), ['Cost', 'Input tokens', 'Output tokens', 'Traces', 'Errors'])
    await screenshot(page, 'usage')

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
