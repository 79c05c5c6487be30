import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from '@tracewell/db'
import { screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { sendTraces, timedSpan } from '../support/seed.ts'

const day = Date.parse('2026-03-02T10:00:00Z')

describe('erasures and the export in the console settings', () => {
  // Alice has two traces of two spans, Bob one of three.
  const fx = consoleFixture(
    async (stack) => {
      await sendTraces(stack.url, stack.projectKey, 'shop', (tracer) => {
        for (const [user, at, children] of [['alice', 0, 1], ['alice', 60_000, 1], ['bob', 120_000, 2]] as const) {
          const root = timedSpan(tracer, `answer for ${user}`, day + at, day + at + 900, { attributes: { 'user.id': user } })
          for (let child = 0; child < children; child++) timedSpan(tracer, 'llm call', day + at + 10, day + at + 800, { parent: root.context, attributes: { 'user.id': user } }).end()
          root.end()
        }
      })
      const countSpans = async () => (await sql<{ n: number }>`select count(*)::integer as n from trace_summaries where project_id = ${stack.projectId}`.execute(stack.database.db)).rows[0]!.n
      for (let tries = 0; (await countSpans()) < 3; tries++) {
        if (tries > 200) throw new Error('the traces were not summarised')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    { ERASURE_POLL_MS: '100', ERASURE_RECHECK_AFTER_MS: '500' },
  )

  it('erases a user after a confirmation and shows the progress until completed', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.goto(`/settings?project_id=${fx.stack.projectId}`)
    const form = page.getByRole('form', { name: 'Request an erasure' })
    await form.waitFor()
    await form.getByLabel('Erase').selectOption('userId')
    await form.getByLabel('User id').fill('alice')
    let asked = ''
    page.once('dialog', (dialog) => {
      asked = dialog.message()
      void dialog.accept()
    })
    await form.getByRole('button', { name: 'Erase' }).click()
    const row = page.getByRole('table', { name: 'Erasure requests' }).locator('tbody tr').first()
    await row.waitFor()
    assert.match(asked, /^Erase everything stored about user alice/)
    assert.equal(await row.locator('td').first().textContent(), 'user alice')
    await row.getByText('completed', { exact: true }).waitFor({ timeout: 30_000 })
    assert.equal(await row.locator('td').nth(3).textContent(), '2 traces, 4 spans, 0 sessions, 0 scores, 0 judgments, 0 dataset items')
    await screenshot(page, 'settings-erasure-completed')

    const { rows } = await sql<{ user_id: string | null; n: number }>`
      select user_id, count(*)::integer as n from spans where project_id = ${fx.stack.projectId} group by user_id order by user_id`.execute(fx.stack.database.db)
    assert.deepEqual(rows, [{ user_id: 'bob', n: 3 }])
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('exports the spans of the days chosen, as OTLP/JSON lines or Parquet', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.goto(`/settings?project_id=${fx.stack.projectId}`)
    const exporter = page.getByRole('group', { name: 'Export spans' })
    await exporter.waitFor()
    await exporter.getByLabel('From (UTC day, inclusive)').fill('2026-03-02')
    await exporter.getByLabel('To (UTC day, inclusive)').fill('2026-03-02')
    const link = exporter.getByRole('link', { name: 'Export spans' })
    const href = (await link.getAttribute('href')) ?? ''
    assert.equal(href, `/api/projects/${fx.stack.projectId}/export?format=jsonl&from=2026-03-02T00%3A00%3A00Z&to=2026-03-03T00%3A00%3A00.000Z`)
    // The browser's own download, with the session cookie.
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()])
    assert.equal(download.suggestedFilename(), `${fx.stack.projectId}-spans.jsonl`)
    const path = await download.path()
    const { readFile } = await import('node:fs/promises')
    const lines = (await readFile(path, 'utf8')).trim().split('\n').map((line) => JSON.parse(line))
    assert.deepEqual(lines.map((line) => line.resourceSpans[0].scopeSpans[0].spans[0].name), ['answer for bob', 'llm call', 'llm call'])

    await exporter.getByLabel('Format').selectOption('parquet')
    const parquet = await page.request.get((await link.getAttribute('href')) ?? '')
    assert.equal(parquet.headers()['content-type'], 'application/vnd.apache.parquet')
    assert.equal((await parquet.body()).subarray(0, 4).toString(), 'PAR1')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
