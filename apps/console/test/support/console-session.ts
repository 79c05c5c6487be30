import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { openConsole, type ConsolePage } from './browser.ts'
import type { Stack } from './stack.ts'

// The browser logs the 401s of GET /api/me and /api/session as console errors while nobody is signed in.
export const signedOutErrors = [/status of 401 \(Unauthorized\)/]

/** A browser signed in to the stack's console with its team key, through the sign-in page. */
export async function signedInConsole(browser: Browser, stack: Stack, expectedErrors: RegExp[] = []): Promise<ConsolePage> {
  const opened = await openConsole(browser, stack.url, [...signedOutErrors, ...expectedErrors])
  await opened.page.goto('/sign-in')
  await signInWithKey(opened.page, stack.teamKey)
  await opened.page.waitForURL(/\/traces\?project_id=/)
  return opened
}

/** The sign-in page's team-key form (folded below the email and password): fill it and send it. */
export async function signInWithKey(page: ConsolePage['page'], key: string): Promise<void> {
  const summary = page.getByText('Sign in with a team key')
  if ((await page.locator('details.key-sign-in').getAttribute('open')) === null) await summary.click()
  await page.getByLabel('Team API key').fill(key)
  await page.getByRole('button', { name: 'Sign in with the key' }).click()
}

/** A person signed in through the sign-in page's email and password. */
export async function signedInPerson(browser: Browser, stack: Stack, email: string, password: string, expectedErrors: RegExp[] = []): Promise<ConsolePage> {
  const opened = await openConsole(browser, stack.url, [...signedOutErrors, ...expectedErrors])
  await opened.page.goto('/sign-in')
  await opened.page.getByLabel('Email').fill(email)
  await opened.page.getByLabel('Password').fill(password)
  await opened.page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await opened.page.waitForURL(/\/traces\?project_id=/)
  return opened
}

export function assertNoProblems(opened: ConsolePage): void {
  assert.deepEqual(opened.problems, [], 'the page logged no errors')
}
