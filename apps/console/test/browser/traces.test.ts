import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { eventuallyEqual, screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { seedLargeTrace, seedScenario } from '../support/scenario.ts'
import { sendTraces, timedSpan } from '../support/seed.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { poolOf } from '@tracewell/db'

describe('traces in the console', () => {
  const fx = consoleFixture(async (stack) => ({
    scenario: await seedScenario(stack.url, stack.projectKey),
    largeTraceId: await seedLargeTrace(stack.url, stack.projectKey, 5_000),
  }))

  it('lists the traces sent through the OpenTelemetry exporter, newest first', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    const rows = page.locator('table.grid tbody tr')
    await rows.nth(5).waitFor()
    assert.equal(await rows.count(), 6)
    const names = await page.locator('table.grid tbody tr td:nth-child(2)').allTextContents()
    assert.deepEqual(names, ['nightly-report', 'POST /invoice/explain', 'POST /chat', 'POST /chat', 'POST /chat', 'agent run'])
    const services = await page.locator('table.grid tbody tr td:nth-child(3)').allTextContents()
    assert.deepEqual(services, ['reporter', 'billing-bot', 'support-bot', 'support-bot', 'support-bot', 'agent'])
    assert.equal(await rows.nth(5).locator('td:nth-child(6)').textContent(), '5,000')
    await screenshot(page, 'traces')

    // The light theme, kept for the next visit.
    await page.getByRole('button', { name: 'Switch to the light theme' }).click()
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light')
    await page.reload()
    await rows.first().waitFor()
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light')
    await screenshot(page, 'traces-light')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('keeps filters in the URL: they reach the API, survive a reload, and Back undoes them', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    const listRequests: URL[] = []
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.pathname === '/api/traces') listRequests.push(url)
    })
    await page.locator('table.grid tbody tr').first().waitFor()
    await page.getByLabel('Service').fill('billing-bot')
    await page.getByLabel('Status').selectOption('error')
    await page.getByText('More filters').click()
    await page.getByLabel('Attribute (key=value)').fill('http.method=POST')
    await page.getByRole('button', { name: 'Add' }).click()
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/service=billing-bot/)
    const expected = 'service=billing-bot&status=error&attr=http.method%3DPOST'
    assert.ok(new URL(page.url()).search.endsWith(expected), page.url())

    const sent = async () => {
      for (let i = 0; i < 50 && !listRequests.some((url) => url.searchParams.get('service') === 'billing-bot'); i++) await page.waitForTimeout(100)
      return listRequests.findLast((url) => url.searchParams.get('service') === 'billing-bot')
    }
    const request = await sent()
    assert.deepEqual([request?.searchParams.get('status'), request?.searchParams.getAll('attr'), request?.searchParams.get('project_id')], ['error', ['http.method=POST'], fx.stack.projectId])
    const names = () => page.locator('table.grid tbody tr td:nth-child(2)').allTextContents()
    await page.waitForFunction(() => document.querySelectorAll('table.grid tbody tr').length === 1)
    assert.deepEqual(await names(), ['POST /invoice/explain'])

    listRequests.length = 0
    await page.reload()
    await page.locator('table.grid tbody tr').first().waitFor()
    assert.equal(await page.getByLabel('Service').inputValue(), 'billing-bot')
    assert.equal(await page.getByLabel('Status').inputValue(), 'error')
    assert.equal(await page.getByRole('list', { name: 'Attribute filters' }).textContent(), 'http.method=POST×')
    assert.ok(await sent(), 'the reloaded page asks for the same filters')
    await page.waitForFunction(() => document.querySelectorAll('table.grid tbody tr').length === 1)
    assert.deepEqual(await names(), ['POST /invoice/explain'])
    assert.equal(await page.getByText('3 filters applied').count(), 1)
    await screenshot(page, 'traces-filtered')

    await page.goBack()
    await page.waitForURL((url) => !url.search.includes('service='))
    assert.equal(await page.getByLabel('Service').inputValue(), '')
    await page.waitForFunction(() => document.querySelectorAll('table.grid tbody tr').length === 6)
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('sorts by a column from its header, the sort kept in the URL', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.locator('table.grid tbody tr').nth(5).waitFor()
    await page.getByRole('button', { name: 'Spans' }).click()
    await page.waitForURL(/sort=spans/)
    const spans = async () => page.locator('table.grid tbody tr td:nth-child(6)').allTextContents()
    assert.deepEqual(await eventuallyEqual(spans, ['5,000', '4', '3', '3', '3', '2']), ['5,000', '4', '3', '3', '3', '2'])
    assert.equal(await page.locator('th[aria-sort="descending"]').textContent(), 'Spans▼')
    await page.getByRole('button', { name: 'Spans' }).click()
    await page.waitForURL(/order=asc/)
    assert.deepEqual(await eventuallyEqual(spans, ['2', '3', '3', '3', '4', '5,000']), ['2', '3', '3', '3', '4', '5,000'])
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('opens a trace from the list by keyboard: a waterfall and the LLM call as a chat', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.locator('table.grid tbody tr').first().waitFor()
    // Tab into the list, down to the third trace (the newest support chat), Enter.
    await page.locator('table.grid tbody tr').first().focus()
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    const newestChat = fx.seeded.scenario.supportTraceIds[2] as string
    await page.waitForURL(new RegExp(`/traces/${newestChat}\\?project_id=${fx.stack.projectId}`))
    await page.getByRole('heading', { name: 'POST /chat', level: 1 }).waitFor()

    const tree = page.getByRole('tree', { name: 'Spans of the trace' })
    const items = tree.getByRole('treeitem')
    await items.nth(2).waitFor()
    assert.deepEqual(await items.locator('.span-name').allTextContents(), ['POST /chat', 'retrieve-docs', 'openai.chat.completions.create'])
    assert.deepEqual(await items.evaluateAll((elements) => elements.map((element) => element.getAttribute('aria-level'))), ['1', '2', '2'])

    // Arrow keys walk the tree; the chosen span goes into the URL and the panel.
    await tree.focus()
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('ArrowDown')
    await page.waitForURL(/span=/)
    await page.getByRole('heading', { name: 'openai.chat.completions.create' }).waitFor()
    const messages = page.getByRole('list', { name: 'Messages' }).getByRole('listitem')
    assert.deepEqual(await messages.locator('.role').allTextContents(), ['System', 'User', 'Assistant'])
    assert.equal(await messages.nth(1).locator('.message-text').textContent(), 'Found it, thanks!')
    assert.equal(await messages.nth(2).locator('.message-text').textContent(), 'Glad it worked. Anything else?')
    const facts = await page.locator('.panel-section .facts').first().textContent()
    assert.match(facts ?? '', /Modelgpt-4o/)
    assert.match(facts ?? '', /Tokens96 in · 31 out · 127 total/)
    await screenshot(page, 'trace-llm-span')

    // The URL alone reopens the same span.
    const spanUrl = page.url()
    await page.goto(spanUrl)
    await page.getByRole('heading', { name: 'openai.chat.completions.create' }).waitFor()
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('marks errors in the waterfall and shows the status message', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.goto(`/traces/${fx.seeded.scenario.billingTraceId}?project_id=${fx.stack.projectId}`)
    const items = page.getByRole('treeitem')
    await items.nth(1).waitFor()
    assert.equal(await page.locator('.waterfall-row.error').count(), 2)
    await items.nth(1).click()
    await page.getByText('429 Too Many Requests').waitFor()
    assert.equal(await page.locator('.span-facts .badge.error').textContent(), 'error')
    assert.equal(await page.getByRole('list', { name: 'Messages' }).locator('.message-text').first().textContent(), 'Why is my invoice higher this month?')
    await screenshot(page, 'trace-error')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('shows a 5,000-span trace rendering only the rows in view, and reaches its last span by keyboard', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.goto(`/traces/${fx.seeded.largeTraceId}?project_id=${fx.stack.projectId}`)
    await page.getByRole('treeitem').first().waitFor({ timeout: 30_000 })
    assert.equal(await page.locator('.summary-strip dd').nth(2).textContent(), '5,000')
    const rendered = await page.getByRole('treeitem').count()
    assert.ok(rendered > 10 && rendered < 100, `${rendered} rows in the page, not 5,000`)

    await page.getByRole('tree').focus()
    await page.keyboard.press('End')
    // The root is selected when the page opens: wait for End to move the selection, not for
    // a selected row, which is there before the key is handled.
    // The root, then 500 steps of a parent and (up to) nine tool calls: 1 + 499 × 10 + 1 + 8.
    const last = page.locator('.waterfall-row.selected .span-name', { hasText: 'tool call 499.7' })
    await last.waitFor({ timeout: 30_000 })
    assert.equal(await last.textContent(), 'tool call 499.7')
    assert.ok((await page.getByRole('treeitem').count()) < 100)
    // Folding the root hides the other 4,999.
    await page.keyboard.press('Home')
    await page.keyboard.press('ArrowLeft')
    await page.waitForFunction(() => document.querySelectorAll('[role=treeitem]').length === 1)
    await page.keyboard.press('ArrowRight')
    await page.waitForFunction(() => document.querySelectorAll('[role=treeitem]').length > 10)
    await screenshot(page, 'trace-5000-spans')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('says so while the newest traces are still being summarised, and stops once they are', async () => {
    // A batch stored 30 s ago and not folded: the summariser cannot take its turn while this
    // session holds the fold's lock, from before the batch is committed until the notice is seen
    // (a transaction's lock, taken again after the commit, let a quick fold in between).
    const pool = poolOf.get(fx.stack.database.db)
    assert.ok(pool)
    const client = await pool.connect()
    try {
      await client.query('select pg_advisory_lock(7215501872340113)')
      await client.query(`insert into summary_deltas (created_at, trace_count, traces, usage) values (now() - interval '30 seconds', 3, '[]', '[]')`)
      const opened = await signedInConsole(fx.browser, fx.stack)
      const { page } = opened
      const notice = page.getByRole('status').filter({ hasText: 'still being summarised' })
      await notice.waitFor({ timeout: 10_000 })
      assert.match(await notice.textContent() ?? '', /about 3\d s behind \(3 waiting\)/)
      await screenshot(page, 'traces-summarising')
      await client.query('select pg_advisory_unlock(7215501872340113)')
      await notice.waitFor({ state: 'detached', timeout: 15_000 })
      assertNoProblems(opened)
      await opened.context.close()
    } finally {
      await client.query('select pg_advisory_unlock_all()').catch(() => {})
      client.release()
    }
  })

  // Last: the trace it sends would change what the tests above count.
  it('shows new traces as they arrive in live mode', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    const rows = page.locator('table.grid tbody tr')
    await rows.nth(5).waitFor()
    await page.getByRole('button', { name: 'Live' }).click()
    await page.waitForURL(/live=1/)
    await page.getByRole('button', { name: 'Live', pressed: true }).waitFor()
    await sendTraces(fx.stack.url, fx.stack.projectKey, 'late-arrival', (tracer) => timedSpan(tracer, 'arrived while watching', Date.now() - 100, Date.now()).end())
    const fresh = page.locator('table.grid tbody tr.fresh')
    await fresh.waitFor({ timeout: 10_000 })
    assert.equal(await fresh.locator('td:nth-child(2)').textContent(), 'arrived while watching')
    assert.equal(await rows.first().locator('td:nth-child(2)').textContent(), 'arrived while watching')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
