import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from '@tracewell/db'
import { screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'

const emptyTrace = { resourceSpans: [] }

describe('settings in the console', () => {
  const fx = consoleFixture()

  it('creates a project, then a key shown once with a copy button, listed by prefix, and revokes it', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page, context } = opened
    await context.grantPermissions(['clipboard-read', 'clipboard-write'])
    await page.getByRole('link', { name: 'Settings' }).click()
    await page.getByRole('heading', { name: 'Projects' }).waitFor()

    await page.getByLabel('New project').fill('Checkout assistant')
    await page.getByRole('button', { name: 'Create project' }).click()
    await page.getByRole('heading', { name: 'Keys of Checkout assistant' }).waitFor()
    const project = await fx.stack.database.db.selectFrom('projects').selectAll().where('name', '=', 'Checkout assistant').executeTakeFirstOrThrow()
    assert.equal(new URL(page.url()).searchParams.get('project_id'), project.id)
    // The heading shows before the key list has loaded: its answer is waited for, then counted.
    const noKey = page.getByRole('table', { name: 'project keys' }).getByText('No key yet.')
    await noKey.waitFor()
    assert.equal(await noKey.count(), 1)

    await page.getByRole('button', { name: 'Create a project key' }).click()
    const secret = page.getByLabel('The new project key')
    await secret.waitFor()
    const key = (await secret.textContent()) ?? ''
    assert.match(key, /^tw_proj_[A-Za-z0-9_-]{43}$/)
    await page.getByRole('button', { name: 'Copy', exact: true }).click()
    await page.getByRole('button', { name: 'Copied' }).waitFor()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key)
    await screenshot(page, 'settings-new-key')

    // The key works, and the list shows it by its prefix only.
    const send = () => fetch(`${fx.stack.url}/v1/traces`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(emptyTrace) })
    assert.equal((await send()).status, 200)
    const keysTable = page.getByRole('table', { name: 'project keys' })
    assert.deepEqual(await keysTable.locator('tbody td:first-child').allTextContents(), [`${key.slice(0, 12)}…`])

    // Shown once: gone when dismissed, and not shown again after a reload.
    await page.getByRole('button', { name: 'I have saved it' }).click()
    await page.reload()
    await keysTable.locator('tbody tr').first().waitFor()
    assert.equal(await page.content().then((html) => html.includes(key)), false)

    page.once('dialog', (dialog) => void dialog.accept())
    await page.getByRole('button', { name: `Revoke ${key.slice(0, 12)}…` }).click()
    await keysTable.getByText(/^revoked /).waitFor()
    const stored = await fx.stack.database.db.selectFrom('api_keys').select(['revoked_at', 'prefix']).where('project_id', '=', project.id).executeTakeFirstOrThrow()
    assert.equal(stored.prefix, key.slice(0, 12))
    assert.ok(stored.revoked_at instanceof Date)
    const refused = await send()
    assert.equal(refused.status, 401, 'the revoked key sends no more traces')
    await screenshot(page, 'settings-revoked')
    assertNoProblems(opened)
    await context.close()
  })

  it('saves a retention policy', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.goto(`/settings?project_id=${fx.stack.projectId}`)
    const form = page.getByRole('form', { name: 'Retention policy' })
    await form.waitFor()
    assert.equal(await form.getByLabel('Days kept').inputValue(), '30')
    await form.getByLabel('Delete traces older than the period below').check()
    await form.getByLabel('Days kept').fill('14')
    await form.getByRole('button', { name: 'Save retention' }).click()
    await form.getByText('Saved.').waitFor()
    const policy = await fx.stack.database.db.selectFrom('project_retention_policies').select(['enabled', 'retention_days']).where('project_id', '=', fx.stack.projectId).executeTakeFirstOrThrow()
    assert.deepEqual(policy, { enabled: true, retention_days: 14 })
    await page.reload()
    await form.waitFor()
    assert.equal(await form.getByLabel('Days kept').inputValue(), '14')
    assert.equal(await form.getByLabel('Delete traces older than the period below').isChecked(), true)

    // npm start runs the cleanup itself, daily at 03:00 UTC by default; without CRON_API_KEY its
    // endpoint is open, and the panel says so.
    const cleanup = form.getByLabel('Cleanup runs')
    await cleanup.getByText(/^Cleanup runs on the schedule 0 3 \* \* \* \(UTC\); next run .+\.$/).waitFor()
    await cleanup.getByText('The cleanup has not run yet.').waitFor()
    assert.match(await cleanup.getByRole('alert').textContent() ?? '', /^The cleanup endpoint is open: CRON_API_KEY is not set/)
    const run = await fetch(`${fx.stack.url}/api/cron/cleanup-traces`)
    assert.equal(run.status, 200)
    await page.reload()
    await cleanup.getByText(/^Last run .+ \(called, complete\): 0 spans deleted\.$/).waitFor()
    await form.getByText(/^Last cleanup of this project .+: 0 spans deleted\.$/).waitFor()
    await form.scrollIntoViewIfNeeded()
    await screenshot(page, 'settings-retention')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('sets a project’s own ingest rate limit, which ingest applies within seconds, then no limit, then the default', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.goto(`/settings?project_id=${fx.stack.projectId}`)
    const form = page.getByRole('form', { name: 'Ingest rate limit' })
    await form.waitFor()
    assert.equal(await form.getByLabel('The default of the settings: no limit').isChecked(), true)
    await form.getByLabel('A limit of its own').check()
    await form.getByLabel('Spans per second').fill('1')
    await form.getByLabel('Burst (spans)').fill('3')
    await form.getByRole('button', { name: 'Save rate limit' }).click()
    await form.getByText('Saved. Ingest applies it within seconds.').waitFor()
    await form.getByText('Now: 1 span per second, bursts of 3.').waitFor()
    const stored = () => fx.stack.database.db.selectFrom('project_ingest_limits').select(['spans_per_second', 'burst']).where('project_id', '=', fx.stack.projectId).executeTakeFirst()
    assert.deepEqual(await stored(), { spans_per_second: 1, burst: 3 })
    await screenshot(page, 'settings-ingest-limit')

    // Ingest reloads the limits every 5 s (INGEST_RATE_LIMIT_REFRESH_MS): a few requests of 3 spans later it refuses one.
    const threeSpans = JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [0, 1, 2].map((i) => ({ traceId: 'ab'.repeat(16), spanId: `${i}`.padStart(16, '0'), name: `limited ${i}`, startTimeUnixNano: '1795316906845000000', endTimeUnixNano: '1795316906945000000' })) }] }] })
    const send = () => fetch(`${fx.stack.url}/v1/traces`, { method: 'POST', headers: { 'x-api-key': fx.stack.projectKey, 'content-type': 'application/json' }, body: threeSpans })
    let refused: Response | undefined
    for (const deadline = Date.now() + 12_000; Date.now() < deadline && refused === undefined; ) {
      const response = await send()
      if (response.status === 429) refused = response
      else await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.ok(refused, 'a request over the limit is refused within the refresh interval')
    assert.equal(refused.headers.get('ratelimit-limit'), '3')
    assert.ok(Number(refused.headers.get('retry-after')) >= 1)

    await form.getByLabel('No limit', { exact: true }).check()
    await form.getByRole('button', { name: 'Save rate limit' }).click()
    await form.getByText('Now: no limit.').waitFor()
    assert.deepEqual(await stored(), { spans_per_second: null, burst: null })
    await page.reload()
    await form.waitFor()
    assert.equal(await form.getByLabel('No limit', { exact: true }).isChecked(), true)

    await form.getByLabel('The default of the settings: no limit').check()
    await form.getByRole('button', { name: 'Save rate limit' }).click()
    await form.getByText('Now: no limit (the default).').waitFor()
    assert.equal(await stored(), undefined)
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('lists the team keys, the one signed in with among them', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.goto('/settings')
    const teamKeys = page.getByRole('table', { name: 'team keys' })
    await teamKeys.locator('tbody tr').first().waitFor()
    assert.deepEqual(await teamKeys.locator('tbody td:first-child').allTextContents(), [`${fx.stack.teamKey.slice(0, 12)}…`])
    const count = await fx.stack.database.db.selectFrom('api_keys').select(sql<string>`count(*)`.as('n')).where('kind', '=', 'team').executeTakeFirstOrThrow()
    assert.equal(count.n, '1')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
