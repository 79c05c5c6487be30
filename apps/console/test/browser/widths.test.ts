import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInConsole } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { seedScenario } from '../support/scenario.ts'

// Issue 47 §5: the trace list and a trace fit a laptop (1280×800) and read on a phone (390×844):
// nothing scrolls sideways, the list's Scores column is on screen at 1280, and names cut short
// show in full on hover.

const laptop = { width: 1280, height: 800 }
const phone = { width: 390, height: 844 }

/** How far the page, or its scrolling content area, is wider than the window (0 when it fits). */
const overflow = (page: Page) =>
  page.evaluate(() => {
    const content = document.querySelector<HTMLElement>('.content')
    return Math.max(document.documentElement.scrollWidth - window.innerWidth, content ? content.scrollWidth - content.clientWidth : 0)
  })

/** Text cut short by CSS (an ellipsis) without a title that gives it whole. */
const cutWithoutTitle = (page: Page, selector: string) =>
  page.evaluate((css) => {
    const cut: string[] = []
    for (const element of document.querySelectorAll<HTMLElement>(css)) {
      if (element.scrollWidth > element.clientWidth + 1 && !(element.title || element.closest('[title]'))) cut.push(element.textContent ?? '')
    }
    return cut
  }, selector)

describe('the console at every width', () => {
  const fx = consoleFixture(async (stack) => seedScenario(stack.url, stack.projectKey))

  for (const [label, viewport] of [['1280×800', laptop], ['390×844', phone]] as const) {
    it(`fits the trace list and a trace at ${label}`, async () => {
      const opened = await signedInConsole(fx.browser, fx.stack)
      const { page } = opened
      await page.setViewportSize(viewport)
      await page.locator('table.grid tbody tr').first().waitFor()
      await page.waitForTimeout(200)
      await screenshot(page, `widths-list-${viewport.width}`)
      assert.equal(await overflow(page), 0, 'the trace list does not scroll sideways')
      if (viewport === laptop) {
        const scores = await page.locator('table.grid thead th', { hasText: 'Scores' }).boundingBox()
        assert.ok(scores && scores.x + scores.width <= viewport.width, `the Scores column is on screen: ${JSON.stringify(scores)}`)
      }
      assert.deepEqual(await cutWithoutTitle(page, 'table.grid td, table.grid td *'), [], 'nothing in the list is cut without a title')
      const costs = await page.locator('table.grid tbody td.cost, table.grid tbody td[data-column="cost"]').allTextContents()
      for (const cost of costs) assert.doesNotMatch(cost, /…/, 'costs are written whole')

      await page.goto(`/traces/${fx.seeded.billingTraceId}?project_id=${fx.stack.projectId}`)
      await page.locator('.waterfall-row').nth(1).waitFor({ state: 'attached' })
      await page.locator('.waterfall').scrollIntoViewIfNeeded()
      await page.waitForTimeout(200)
      await screenshot(page, `widths-trace-${viewport.width}`)
      assert.equal(await overflow(page), 0, 'the trace page does not scroll sideways')
      assert.deepEqual(await cutWithoutTitle(page, '.waterfall-name, .waterfall-name *'), [], 'waterfall names and badges are whole or titled')
      assertNoProblems(opened)
      await opened.context.close()
    })
  }
})
