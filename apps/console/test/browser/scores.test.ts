import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { eventuallyEqual, screenshot } from '../support/browser.ts'
import { columnTexts } from '../support/grid.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { seedScenario } from '../support/scenario.ts'

interface ApiScore {
  name: string
  value: unknown
  spanId: string | null
  source: string
  comment: string | null
}

describe('scores in the console', () => {
  const fx = consoleFixture(async (stack) => {
    const scenario = await seedScenario(stack.url, stack.projectKey)
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'x-api-key': stack.projectKey, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      assert.equal(response.status, 201, await response.text())
    }
    // Configured over the API; "tone" is configured in the console below.
    await post('/api/score-configs', { name: 'helpful', dataType: 'boolean' })
    await post('/api/score-configs', { name: 'accuracy', dataType: 'numeric', minValue: 0, maxValue: 5 })
    // A score from an application, on the billing trace.
    await post('/api/scores', { traceId: scenario.billingTraceId, name: 'accuracy', value: 1, comment: 'wrong invoice line' })
    return scenario
  })
  const scoresOf = async (traceId: string): Promise<ApiScore[]> => {
    const response = await fetch(`${fx.stack.url}/api/scores?trace_id=${traceId}`, { headers: { 'x-api-key': fx.stack.projectKey } })
    return (await response.json()).scores
  }

  it('annotates a trace and a span: thumbs, a number with a comment, a category', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    const traceId = fx.seeded.supportTraceIds[0] as string
    await page.goto(`/traces/${traceId}?project_id=${fx.stack.projectId}`)
    const traceScores = page.getByRole('region', { name: 'Scores of this trace' })
    await traceScores.getByText('No scores yet.').waitFor()

    await traceScores.getByRole('button', { name: 'helpful: thumbs up' }).click()
    await traceScores.getByRole('button', { name: 'helpful: thumbs up', pressed: true }).waitFor()
    await traceScores.getByLabel('Comment (saved with the next score you give)').fill('Correct, but could cite the docs.')
    await traceScores.getByLabel('accuracy (0–5)').fill('4')
    await traceScores.getByRole('button', { name: 'Save accuracy' }).click()
    await traceScores.getByText('Correct, but could cite the docs.').waitFor()
    // Out of its configured range, the browser refuses it before the API would.
    const accuracy = traceScores.getByLabel('accuracy (0–5)')
    await accuracy.fill('9')
    await traceScores.getByRole('button', { name: 'Save accuracy' }).click()
    assert.equal(await accuracy.evaluate((input) => (input as HTMLInputElement).validity.rangeOverflow), true)

    // A categorical score, configured here, given on the LLM span.
    await traceScores.getByText('Configure another score').click()
    const configure = traceScores.getByRole('form', { name: 'Configure a score' })
    await configure.getByLabel('Name').fill('tone')
    await configure.getByLabel('Type').selectOption('categorical')
    await configure.getByLabel('Categories (label=value, …)').fill('polite=1, curt=0')
    await configure.getByRole('button', { name: 'Add score' }).click()
    await page.getByRole('treeitem', { name: /openai\.chat\.completions\.create/ }).click()
    const spanScores = page.getByRole('region', { name: 'Scores of this span' })
    await spanScores.getByLabel('tone').selectOption('polite')
    await spanScores.getByRole('list', { name: 'Given scores of this span' }).getByText('polite').waitFor()
    await screenshot(page, 'trace-scores')

    const stored = (await scoresOf(traceId)).map((s) => [s.name, s.value, s.spanId === null ? 'trace' : 'span', s.source, s.comment]).sort()
    assert.deepEqual(stored, [
      ['accuracy', 4, 'trace', 'annotation', 'Correct, but could cite the docs.'],
      ['helpful', true, 'trace', 'annotation', null],
      ['tone', 'polite', 'span', 'annotation', null],
    ])
    // Thumbs down replaces the thumbs up: one annotation per score.
    await traceScores.getByRole('button', { name: 'helpful: thumbs down' }).click()
    await traceScores.getByRole('button', { name: 'helpful: thumbs down', pressed: true }).waitFor()
    const helpful = async () => (await scoresOf(traceId)).filter((s) => s.name === 'helpful').map((s) => s.value)
    assert.deepEqual(await eventuallyEqual(helpful, [false]), [false])
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('shows scores in the list, filters and sorts by one', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    const rows = page.locator('table.grid tbody tr')
    await rows.nth(4).waitFor()
    const scoreCells = () => columnTexts(page, /^Scores/)
    const cells = await eventuallyEqual(async () => (await scoreCells()).filter((text) => text !== '—').length, 2)
    assert.equal(cells, 2)
    assert.ok((await scoreCells()).some((text) => text.includes('accuracy 4') && text.includes('helpful thumbs down')), String(await scoreCells()))

    await page.getByText('More filters').click()
    await page.getByLabel('Score', { exact: true }).fill('accuracy')
    await page.getByLabel('Score at least').fill('3')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/score_name=accuracy&min_score=3/)
    assert.equal(await eventuallyEqual(() => rows.count(), 1), 1)
    assert.equal(await rows.first().locator('td:nth-child(2)').textContent(), 'POST /chat')

    // Both accuracy-scored traces, sorted by the score: highest first, then lowest first.
    await page.getByLabel('Score at least').fill('')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL((url) => !url.search.includes('min_score'))
    await page.getByRole('button', { name: 'Scores (accuracy)' }).click()
    await page.waitForURL(/sort=score/)
    const names = () => page.locator('table.grid tbody tr td:nth-child(2)').allTextContents()
    assert.deepEqual(await eventuallyEqual(names, ['POST /chat', 'POST /invoice/explain']), ['POST /chat', 'POST /invoice/explain'])
    await page.getByRole('button', { name: 'Scores (accuracy)' }).click()
    await page.waitForURL(/order=asc/)
    assert.deepEqual(await eventuallyEqual(names, ['POST /invoice/explain', 'POST /chat']), ['POST /invoice/explain', 'POST /chat'])
    await screenshot(page, 'traces-by-score')
    // Eleven columns at 1,440 px: every header must read whole, not cut to an ellipsis.
    const cutHeaders = await page.locator('table.grid thead th').evaluateAll((headers) => headers.filter((th) => th.scrollWidth > th.clientWidth).map((th) => th.textContent))
    assert.deepEqual(cutHeaders, [])
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('charts each score’s average over time on the usage page', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.getByRole('link', { name: 'Usage' }).click()
    const chart = page.locator('figure.score-chart')
    await chart.locator('svg.recharts-surface[role="application"]').waitFor()
    const legend = await chart.locator('.recharts-legend-item-text').allTextContents()
    assert.deepEqual(legend.sort(), ['accuracy', 'helpful', 'tone'])
    await chart.locator('details.chart-table summary').click()
    assert.deepEqual(await chart.locator('thead th').allTextContents(), ['Day', 'accuracy', 'helpful', 'tone'])
    // Today's accuracy: the application's 1 and the annotation's 4.
    const today = await chart.locator('tbody tr').last().locator('td').allTextContents()
    assert.deepEqual(today, ['2.50', '0', '1'])
    await screenshot(page, 'usage-scores')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
