import type { Page } from 'playwright-core'

/**
 * The texts of one column of the trace list, found by its header: columns move as they are added
 * and as the width hides some, so a test that counts positions breaks for reasons of no interest.
 */
export async function columnTexts(page: Page, header: RegExp): Promise<string[]> {
  const headers = await page.locator('table.grid thead th').allTextContents()
  const index = headers.findIndex((text) => header.test(text))
  if (index < 0) throw new Error(`no column headed ${header} among ${JSON.stringify(headers)}`)
  return page.locator(`table.grid tbody tr td:nth-child(${index + 1})`).allTextContents()
}
