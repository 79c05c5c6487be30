import { isDeepStrictEqual } from 'node:util'
import { mkdirSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

// Debian's Chromium (apt-get install chromium): Playwright cannot download its own browsers here.
export const chromiumPath = '/usr/bin/chromium'
const screenshotDir = new URL('../screenshots/', import.meta.url)

export function launchChromium(): Promise<Browser> {
  // As root (CI), Chromium refuses to start with its sandbox on.
  return chromium.launch({ executablePath: chromiumPath, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] })
}

export interface ConsolePage {
  context: BrowserContext
  page: Page
  /** Everything the page complained about: script errors, console errors (CSP refusals among them). */
  problems: string[]
}

/**
 * A fresh browser profile on the console. Console errors and uncaught exceptions are collected:
 * a page that renders while throwing is still broken. `expectedErrors` are console messages a test
 * causes on purpose (the 401 of a wrong key, say). The system's colour scheme is dark unless told.
 */
/**
 * Chromium fails the requests in flight when the host's network interfaces change, and logs
 * `net::ERR_NETWORK_CHANGED`: in CI the docker suite, run beside this one, starts containers (each
 * a new veth interface). The host's doing, not the console's; what such a failed request should
 * have shown is still asserted by the test itself.
 */
const hostNetworkErrors = [/net::ERR_NETWORK_CHANGED/]

export async function openConsole(browser: Browser, baseURL: string, expectedErrors: RegExp[] = [], options: { colorScheme?: 'dark' | 'light' } = {}): Promise<ConsolePage> {
  const context = await browser.newContext({ baseURL, viewport: { width: 1440, height: 900 }, colorScheme: options.colorScheme ?? 'dark' })
  const page = await context.newPage()
  // Generous: CI runs these beside the e2e suite's dozens of processes on two cores.
  page.setDefaultTimeout(30_000)
  const problems: string[] = []
  const allowed = [...expectedErrors, ...hostNetworkErrors]
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    const text = message.text()
    if (!allowed.some((pattern) => pattern.test(text))) problems.push(`console error: ${text}`)
  })
  return { context, page, problems }
}

/** Saves a screenshot under test/screenshots/ (kept out of git), to look at after the run. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true })
  await page.screenshot({ path: new URL(`${name}.png`, screenshotDir).pathname, fullPage: false })
}

/**
 * What `read` returns once it equals `expected`, polled until then (or the time is up): after a
 * click the page shows the previous answer until the new one has rendered.
 */
export async function eventuallyEqual<T>(read: () => Promise<T>, expected: T, timeoutMs = 30_000): Promise<T> {
  let value = await read()
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && !isDeepStrictEqual(value, expected); value = await read()) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return value
}
