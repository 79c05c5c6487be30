import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openConsole, screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { seedScenario } from '../support/scenario.ts'

// Issue 47 §4: a share link opens one trace, read-only, to a browser that never signed in, asks
// the server for nothing but that trace, and is kept out of search engines.

describe('a share link in the browser', () => {
  const fx = consoleFixture(async (stack) => seedScenario(stack.url, stack.projectKey))

  it('opens the shared trace without signing in, read-only, noindex, and reads nothing else', async () => {
    const owner = await signedInConsole(fx.browser, fx.stack)
    await owner.page.goto(`/traces/${fx.seeded.billingTraceId}?project_id=${fx.stack.projectId}`)
    await owner.page.getByRole('button', { name: 'Share' }).click()
    await owner.page.getByRole('button', { name: 'Make a link' }).click()
    const link = await owner.page.getByLabel('Share link').inputValue()
    assert.match(link, /\/shared\/[A-Za-z0-9_-]{43}$/)
    await screenshot(owner.page, 'share-made')
    assertNoProblems(owner)
    await owner.context.close()

    const visitor = await openConsole(fx.browser, fx.stack.url)
    const asked: string[] = []
    visitor.page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.pathname.startsWith('/api/')) asked.push(url.pathname)
    })
    const response = await visitor.page.goto(new URL(link).pathname)
    assert.equal(response?.headers()['x-robots-tag'], 'noindex, nofollow')
    await visitor.page.getByRole('heading', { name: 'POST /invoice/explain', level: 1 }).waitFor()
    await visitor.page.locator('.waterfall-row').nth(1).waitFor()
    assert.equal(await visitor.page.locator('meta[name="robots"]').getAttribute('content'), 'noindex, nofollow')
    assert.equal(await visitor.page.getByText('Shared, read-only').count(), 1)
    assert.equal(await visitor.page.getByRole('button', { name: /score|dataset|delete|share/i }).count(), 0, 'no control that changes anything')
    assert.deepEqual([...new Set(asked)], [`/api/shared/traces/${new URL(link).pathname.split('/').at(-1)}`], 'the page read its trace and nothing else')
    await screenshot(visitor.page, 'share-opened')
    assertNoProblems(visitor)
    await visitor.context.close()
  })
})
