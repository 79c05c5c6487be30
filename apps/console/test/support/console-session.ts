import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { openConsole, type ConsolePage } from './browser.ts'
import type { Stack } from './stack.ts'

// The browser logs the 401 of GET /api/session as a console error while nobody is signed in.
export const signedOutErrors = [/status of 401 \(Unauthorized\)/]

/** A browser signed in to the stack's console with its team key, through the sign-in page. */
export async function signedInConsole(browser: Browser, stack: Stack, expectedErrors: RegExp[] = []): Promise<ConsolePage> {
  const opened = await openConsole(browser, stack.url, [...signedOutErrors, ...expectedErrors])
  await opened.page.goto('/sign-in')
  await opened.page.getByLabel('Team API key').fill(stack.teamKey)
  await opened.page.getByRole('button', { name: 'Sign in' }).click()
  await opened.page.waitForURL(/\/traces\?project_id=/)
  return opened
}

export function assertNoProblems(opened: ConsolePage): void {
  assert.deepEqual(opened.problems, [], 'the page logged no errors')
}
