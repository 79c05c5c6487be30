import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'

describe('prompts in the console', () => {
  const fx = consoleFixture()

  it('creates a registry and versions, compares them side by side, sets the live one and previews it filled', async () => {
    // The preview without a value is answered 400 (Missing variables), which the fx.browser logs.
    const opened = await signedInConsole(fx.browser, fx.stack, [/status of 400 \(Bad Request\)/])
    const { page } = opened
    await page.getByRole('link', { name: 'Prompts' }).click()
    await page.getByRole('heading', { name: 'New registry' }).waitFor()
    await page.getByLabel('Name').fill('support-greeting')
    await page.getByLabel('Description').fill('The first line of every chat')
    await page.getByRole('button', { name: 'Create registry' }).click()
    await page.getByRole('link', { name: 'support-greeting' }).click()
    await page.getByRole('heading', { name: 'support-greeting', level: 1 }).waitFor()
    assert.equal(await page.getByText('No version yet').count(), 1)

    const form = page.getByRole('form', { name: 'New version' })
    await form.getByLabel('Prompt').fill('Hello ${name}, how can I help?')
    await form.getByLabel('Model').fill('gpt-4o')
    await form.getByLabel('Note').fill('first draft')
    await form.getByRole('button', { name: 'Create version' }).click()
    await form.getByText('Created version 1.').waitFor()

    await form.getByLabel('Prompt').fill('Hello ${name}, how can I help you today?')
    await form.getByLabel('Make it the live version').check()
    await form.getByRole('button', { name: 'Create version' }).click()
    await form.getByText('Created version 2, now live.').waitFor()

    const versions = page.getByRole('table', { name: 'Versions' })
    await versions.locator('tbody tr').nth(1).waitFor()
    // Live is the production label (docs/prompts.md): the versions show their labels.
    assert.deepEqual(await versions.locator('tbody td:first-child').allTextContents(), ['v2production', 'v1'])
    assert.deepEqual(await versions.locator('tbody td:last-child').allTextContents(), ['live', 'Make live'])

    // v1 and v2 side by side: the words v2 added are marked on its side.
    const diff = page.getByLabel('Version 1 and version 2 side by side')
    assert.equal(await diff.locator('.diff-side.old pre').textContent(), 'Hello ${name}, how can I help?')
    assert.equal(await diff.locator('.diff-side.new pre').textContent(), 'Hello ${name}, how can I help you today?')
    assert.equal((await diff.locator('ins').allTextContents()).join(''), ' you today')
    assert.equal(await diff.locator('del').count(), 0)
    await screenshot(page, 'prompts-diff')

    await page.getByRole('button', { name: 'Make version 1 live' }).click()
    await page.getByRole('button', { name: 'Make version 2 live' }).waitFor()
    assert.deepEqual(await versions.locator('tbody td:first-child').allTextContents(), ['v2', 'v1production'])
    const live = await fx.stack.database.db.selectFrom('prompts').select(['version', 'live']).orderBy('version').execute()
    assert.deepEqual(live, [{ version: 1, live: true }, { version: 2, live: false }])

    const preview = page.getByRole('form', { name: 'Preview' })
    await preview.getByLabel('Version').selectOption('1')
    await preview.getByRole('button', { name: 'Preview' }).click()
    await preview.getByRole('alert').waitFor()
    assert.equal(await preview.getByRole('alert').textContent(), 'Missing variables: name')
    await preview.getByLabel('name').fill('Ada Lovelace')
    await preview.getByRole('button', { name: 'Preview' }).click()
    const filled = preview.getByLabel('The prompt with its variables filled')
    await filled.waitFor()
    assert.equal(await filled.textContent(), 'Hello Ada Lovelace, how can I help?')
    await screenshot(page, 'prompts-preview')
    assertNoProblems(opened)
    await opened.context.close()
  })
})
