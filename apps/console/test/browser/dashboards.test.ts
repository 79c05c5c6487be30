import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { eventuallyEqual, screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { seedScenario } from '../support/scenario.ts'
import type { Dashboard } from '../../src/api/dashboards.api.ts'

// Dashboards as a person edits them: the project's default dashboard shown, a widget added with
// its metric, grouping and chart, resized on the grid and still so after a reload (saved with
// PUT), a figure clicked to open its traces, and the dashboard exported and imported as JSON.

describe('dashboards in the console', () => {
  const fx = consoleFixture((stack) => seedScenario(stack.url, stack.projectKey))

  const dashboards = async (): Promise<Dashboard[]> => {
    const answer = await fetch(`${fx.stack.url}/api/dashboards`, { headers: { 'x-api-key': fx.stack.projectKey } })
    assert.equal(answer.status, 200)
    return ((await answer.json()) as { dashboards: Dashboard[] }).dashboards
  }

  it('shows the default dashboard; a widget added and resized stays so after a reload', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.getByRole('link', { name: 'Dashboards' }).click()
    await page.getByRole('heading', { name: 'Usage' }).waitFor()
    // The usage page as widgets: the traces of the last 24 hours counted in a number.
    const traces = page.getByRole('article', { name: 'Traces', exact: true }).first()
    assert.equal(await eventuallyEqual(() => page.locator('article[data-widget-id="total-traces"] .metric-number').textContent(), '5'), '5')
    await traces.waitFor()
    await screenshot(page, 'dashboard-default')

    await page.getByRole('button', { name: 'Add widget' }).click()
    const editor = page.getByRole('region', { name: 'New widget' })
    await editor.getByLabel('Title').fill('Traces by service')
    await editor.getByLabel('Metric').selectOption('traces')
    await editor.getByLabel('Group by').selectOption('service')
    await editor.getByLabel('Chart').selectOption('table')
    await editor.getByLabel('Service', { exact: true }).fill('support-bot')
    await screenshot(page, 'dashboard-widget-editor')
    await editor.getByRole('button', { name: 'Add widget' }).click()
    const widget = page.getByRole('article', { name: 'Traces by service' })
    await widget.waitFor()
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor()
    const saved = (await dashboards()).find((dashboard) => dashboard.isDefault)
    const added = saved?.widgets.find((item) => item.title === 'Traces by service')
    assert.deepEqual(
      { metric: added?.metric, groupBy: added?.groupBy, chart: added?.chart, filter: added?.filter, w: added?.layout?.w },
      { metric: 'traces', groupBy: 'service', chart: 'table', filter: { service: 'support-bot' }, w: 6 },
    )

    // Wider by dragging its corner: the grid has 12 columns, so 3 columns are a quarter of it.
    await widget.scrollIntoViewIfNeeded()
    const before = await widget.boundingBox()
    assert.ok(before)
    const handle = page.locator(`article.react-grid-item[aria-label="Traces by service"] > .react-resizable-handle`)
    await widget.hover()
    const corner = await handle.boundingBox()
    assert.ok(corner)
    const grid = await page.locator('.dashboard-grid').boundingBox()
    assert.ok(grid)
    await page.mouse.move(corner.x + corner.width / 2, corner.y + corner.height / 2)
    await page.mouse.down()
    await page.mouse.move(corner.x + grid.width / 4, corner.y + 80, { steps: 12 })
    await page.mouse.up()
    const resized = await eventuallyEqual(async () => (await dashboards()).find((dashboard) => dashboard.isDefault)?.widgets.find((item) => item.title === 'Traces by service')?.layout?.w, 9)
    assert.equal(resized, 9)

    await page.reload()
    await widget.waitFor()
    const after = await widget.boundingBox()
    assert.ok(after && after.width > before.width * 1.3, `wider after the reload: ${before.width} → ${after?.width}`)
    await screenshot(page, 'dashboard-resized')

    // A figure of the table opens the traces behind it: its time bucket, its service.
    await widget.locator('.series-table').getByRole('button').first().click()
    await page.waitForURL(/\/traces\?/)
    const url = new URL(page.url())
    assert.equal(url.searchParams.get('service'), 'support-bot')
    assert.ok(url.searchParams.get('from') && url.searchParams.get('to'), 'the bucket as from and to')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('exports a dashboard as JSON and imports it as a new one', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.getByRole('link', { name: 'Dashboards' }).click()
    await page.getByRole('heading', { name: 'Usage' }).waitFor()
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()])
    const path = await download.path()
    assert.match(download.suggestedFilename(), /^usage\.dashboard\.json$/)
    const defaultId = (await dashboards()).find((dashboard) => dashboard.isDefault)?.id
    await page.getByLabel('Import JSON').setInputFiles(path)
    await page.waitForURL((url) => url.pathname.startsWith('/dashboards/') && url.pathname !== `/dashboards/${defaultId}`)
    const all = await dashboards()
    assert.equal(all.length, 2)
    const imported = all.find((dashboard) => !dashboard.isDefault)
    const original = all.find((dashboard) => dashboard.isDefault)
    assert.deepEqual(
      imported?.widgets.map((widget) => widget.title),
      original?.widgets.map((widget) => widget.title),
    )
    // The picker shows the new one once the list has been read again.
    assert.equal(await eventuallyEqual(() => page.getByRole('combobox', { name: 'Dashboard' }).inputValue(), imported?.id), imported?.id)
    assertNoProblems(opened)
    await opened.context.close()
  })
})
