import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'

describe('audit log in the console', () => {
  const fx = consoleFixture()

  it('shows a retention change made in the console: who, what, from where, before and after; filters it', async () => {
    const opened = await signedInConsole(fx.browser, fx.stack)
    const { page } = opened
    await page.goto(`/settings?project_id=${fx.stack.projectId}`)
    const form = page.getByRole('form', { name: 'Retention policy' })
    await form.getByLabel('Delete traces older than the period below').check()
    await form.getByLabel('Days kept').fill('14')
    await form.getByRole('button', { name: 'Save retention' }).click()
    await form.getByText('Saved.').waitFor()

    await page.getByRole('link', { name: 'Audit log' }).click()
    const log = page.getByRole('table', { name: 'Audit log' })
    const row = log.locator('tbody tr', { hasText: 'setRetentionPolicy' })
    await row.waitFor()
    const cells = await row.locator('td').evaluateAll((tds) => tds.map((td) => td.textContent ?? ''))
    assert.match(cells[1] ?? '', /^tw_team_.*team key$/, 'who: the team key the console signed in with, by its prefix')
    assert.equal(cells[2], 'setRetentionPolicyPUT /api/projects/:projectId/retention')
    assert.equal(cells[3], `settings ${fx.stack.projectId}`)
    assert.match(cells[4] ?? '', /^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/)

    await row.getByText('Before and after').click()
    const before = JSON.parse((await row.getByLabel('Before').textContent()) ?? 'null') as unknown
    const after = JSON.parse((await row.getByLabel('After').textContent()) ?? 'null') as unknown
    assert.deepEqual([before, after], [{ enabled: false, retentionDays: 30 }, { enabled: true, retentionDays: 14 }])
    await screenshot(page, 'audit-log')

    // Filtered by another resource, nothing; by this one's, the change again; by its author, too.
    const filters = page.getByRole('search', { name: 'Audit log filters' })
    await filters.getByLabel('Resource').selectOption('prompts')
    await page.getByText('No change recorded that matches these filters.').waitFor()
    assert.equal(new URL(page.url()).searchParams.get('resource'), 'prompts')
    await filters.getByLabel('Resource').selectOption('settings')
    await row.waitFor()
    await row.getByRole('button').first().click()
    await page.getByRole('button', { name: 'Everyone’s changes' }).waitFor()
    assert.ok(new URL(page.url()).searchParams.get('actor'))
    assert.equal(await log.locator('tbody tr').count(), 1)
    assertNoProblems(opened)
    await opened.context.close()
  })
})
