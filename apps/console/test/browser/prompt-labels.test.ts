import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import type { Stack } from '../support/stack.ts'

/** The management API with the team key, as a script or a colleague would call it. */
async function api<T>(stack: Stack, method: string, path: string, body?: unknown): Promise<T> {
  const separator = path.includes('?') ? '&' : '?'
  const response = await fetch(`${stack.url}${path}${separator}project_id=${stack.projectId}`, {
    method,
    headers: { 'x-api-key': stack.teamKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  assert.ok(response.ok, `${method} ${path} answered ${response.status}: ${await response.clone().text()}`)
  return (response.status === 204 ? undefined : await response.json()) as T
}

/** A promptset with three versions, the first live (production). */
async function seedPromptset(stack: Stack): Promise<{ promptsetId: string }> {
  const { id } = await api<{ id: string }>(stack, 'POST', '/api/promptsets', { name: 'trip-planner-system' })
  for (const [index, value] of ['Plan trips.', 'Plan trips. Be brief.', 'Plan trips. Be brief. Check the weather.'].entries()) {
    await api(stack, 'POST', `/api/promptsets/${id}/prompts`, { value, model: 'gpt-4o-mini', live: index === 0 })
  }
  return { promptsetId: id }
}

describe('prompt labels in the console', () => {
  const fx = consoleFixture(seedPromptset)

  it('adds, moves and removes labels, refuses a move over someone else’s, and shows the history', async () => {
    // The move refused on purpose is answered 409, which the browser logs.
    const opened = await signedInConsole(fx.browser, fx.stack, [/status of 409 \(Conflict\)/])
    const { page } = opened
    const { promptsetId } = fx.seeded
    await page.goto(`/prompts/${promptsetId}?project_id=${fx.stack.projectId}`)
    const labels = page.getByRole('table', { name: 'Labels' })
    const row = (name: string) => labels.locator('tbody tr', { has: page.locator('th', { hasText: name }) })
    const versionOf = (name: string) => row(name).locator('td').first()
    await row('production').waitFor()
    assert.equal(await versionOf('production').textContent(), 'v1')

    // A new label, at a chosen version.
    const form = page.getByRole('form', { name: 'Add a label' })
    await form.getByLabel('New label').fill('staging')
    await form.getByLabel('At version').selectOption('2')
    await form.getByRole('button', { name: 'Add label' }).click()
    await row('staging').waitFor()
    assert.equal(await versionOf('staging').textContent(), 'v2')

    // Moved to another version from its row.
    await page.getByLabel('Version for staging').selectOption('3')
    await page.getByRole('button', { name: 'Move staging to v3' }).click()
    await versionOf('staging').filter({ hasText: 'v3' }).waitFor()

    // Moving production is making that version live: the versions table follows.
    await page.getByLabel('Version for production').selectOption('2')
    await page.getByRole('button', { name: 'Move production to v2' }).click()
    const versions = page.getByRole('table', { name: 'Versions' })
    await versions.locator('tr.live-row td', { hasText: 'v2' }).waitFor()
    assert.deepEqual(await versions.locator('tbody td:first-child').allTextContents(), ['v3staging', 'v2production', 'v1'])

    // Someone else moves staging meanwhile: the page's move, made from v3, is refused, not applied.
    await api(fx.stack, 'PUT', `/api/promptsets/${promptsetId}/labels/staging`, { version: 1 })
    await page.getByLabel('Version for staging').selectOption('2')
    await page.getByRole('button', { name: 'Move staging to v2' }).click()
    const refusal = page.getByRole('alert').filter({ hasText: 'Prompt label staging' })
    await refusal.waitFor()
    assert.match((await refusal.textContent()) ?? '', /^Could not move the label staging: Prompt label staging is at version 1; expected it at version 3$/)
    await versionOf('staging').filter({ hasText: 'v1' }).waitFor()
    await screenshot(page, 'prompt-labels-conflict')

    // Removed, after a confirmation.
    page.once('dialog', (dialog) => void dialog.accept())
    await page.getByRole('button', { name: 'Remove staging' }).click()
    await row('staging').waitFor({ state: 'detached' })
    assert.equal(await labels.locator('tbody tr').count(), 1)

    // The history, newest first, with the key each move was made with.
    const history = page.getByRole('table', { name: 'Label history' })
    await history.locator('tbody tr', { hasText: 'removed from v1' }).waitFor()
    const moves = await history.locator('tbody tr').evaluateAll((rows) => rows.map((tr) => [...tr.querySelectorAll('td')].slice(1, 3).map((td) => td.textContent)))
    assert.deepEqual(moves, [
      ['staging', 'removed from v1'],
      ['staging', 'v3 → v1'],
      ['production', 'v1 → v2'],
      ['staging', 'v2 → v3'],
      ['staging', 'set at v2'],
      ['production', 'set at v1'],
    ])
    const stored = await api<{ moves: Array<{ movedByKeyPrefix: string | null }> }>(fx.stack, 'GET', `/api/promptsets/${promptsetId}/label-history`)
    assert.deepEqual(await history.locator('tbody tr td:nth-child(4)').allTextContents(), stored.moves.map((move) => (move.movedByKeyPrefix ? `${move.movedByKeyPrefix}…` : 'outside the API')))
    await screenshot(page, 'prompt-labels')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
