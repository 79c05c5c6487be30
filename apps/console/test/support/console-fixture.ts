import { after, before } from 'node:test'
import type { Browser } from 'playwright-core'
import { launchChromium } from './browser.ts'
import { startStack, type Stack } from './stack.ts'

export interface ConsoleFixture<Seeded> {
  readonly stack: Stack
  readonly browser: Browser
  /** What `seed` returned, once the suite's `before` has run. */
  readonly seeded: Seeded
}

/**
 * The set-up every browser suite shares, registered as the enclosing suite's hooks: its own
 * `npm start` on its own database, the data the suite needs sent to it, and a Chromium; all
 * closed after the suite, whatever failed. Read the fields inside tests, not at definition time.
 */
export function consoleFixture<Seeded = undefined>(seed?: (stack: Stack) => Promise<Seeded>, settings: Record<string, string> = {}): ConsoleFixture<Seeded> {
  let stack: Stack | undefined
  let browser: Browser | undefined
  let seeded: Seeded | undefined
  before(async () => {
    stack = await startStack(settings)
    seeded = seed ? await seed(stack) : undefined
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await stack?.stop()
  })
  const ready = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`the console fixture's ${name} is read before its before hook ran`)
    return value
  }
  return {
    get stack() {
      return ready(stack, 'stack')
    },
    get browser() {
      return ready(browser, 'browser')
    },
    get seeded() {
      return seeded as Seeded
    },
  }
}
