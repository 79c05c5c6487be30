import type { Page } from 'playwright-core'

/**
 * Until the query API accepts the console's session on project routes (traces, prompts, sessions,
 * usage with ?project_id=), the browser's requests to them are given the project key on the way
 * out, so the pages can be driven against today's server. The key never reaches the page.
 */
export async function bridgeProjectRoutes(page: Page, projectKey: string): Promise<void> {
  await page.route(/\/api\/(traces|promptsets?|sessions|usage)(\/|\?|$)/, (route) => route.continue({ headers: { ...route.request().headers(), 'x-api-key': projectKey } }))
}
