// bench:console: the console's budgets (docs/console.md#budgets), measured on this machine against
// `npm start` on Postgres, in Debian's Chromium. Each figure is the median of several cold page
// loads (a new browser profile each: nothing cached), timed in the page from the start of the
// navigation, beside a baseline measured in the same run.
//
//   npm run bench:console [-- --traces=100000 --runs=5]
import { existsSync, readFileSync, statSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { createProject, sql, type SpanInsert } from '@tracewell/db'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import type { Browser } from 'playwright-core'
import { launchChromium, openConsole } from '../test/support/browser.ts'
import { signedOutErrors } from '../test/support/console-session.ts'
import { startStack, type Stack } from '../test/support/stack.ts'

const { values } = parseArgs({ options: { traces: { type: 'string', default: '100000' }, runs: { type: 'string', default: '5' } } })
const traceCount = Number(values.traces)
const runs = Number(values.runs)
const distDir = new URL('../dist/', import.meta.url)

const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)] as number
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0')

function span(projectId: string, traceId: string, spanId: string, parentSpanId: string | null, startNs: bigint, durationNs: bigint, extra: Partial<SpanInsert> = {}): SpanInsert {
  return {
    projectId, traceId, spanId, parentSpanId, name: parentSpanId ? 'openai.chat' : 'POST /chat', kind: parentSpanId ? 3 : 2,
    startTimeUnixNano: String(startNs), endTimeUnixNano: String(startNs + durationNs), durationNs: String(durationNs),
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'support-bot', serviceVersion: '1.0.0', scopeName: 'bench', scopeVersion: null,
    llmVendor: parentSpanId ? 'openai' : null, llmModel: parentSpanId ? 'gpt-4o' : null, llmRequestType: parentSpanId ? 'chat' : null,
    inputTokens: parentSpanId ? 120 : null, outputTokens: parentSpanId ? 40 : null, totalTokens: parentSpanId ? 160 : null,
    attributes: parentSpanId ? { 'llm.prompts': { stringValue: '[{"role":"user","content":"How do I reset my password?"}]' } } : { 'http.method': { stringValue: 'POST' } },
    resourceAttributes: { 'service.name': { stringValue: 'support-bot' } }, events: [], links: [],
    ...extra,
  }
}

/** `count` traces of a root and an LLM call each, one a second up to now, in batches. */
async function seedTraces(stack: Stack, projectId: string, count: number, tag: number): Promise<void> {
  const now = BigInt(Date.now()) * 1_000_000n
  let batch: SpanInsert[] = []
  for (let i = 0; i < count; i++) {
    const traceId = hex(tag, 8) + hex(i, 24)
    const start = now - BigInt(count - i) * 1_000_000_000n
    batch.push(span(projectId, traceId, hex(i * 2 + 1, 16), null, start, 900_000_000n), span(projectId, traceId, hex(i * 2 + 2, 16), hex(i * 2 + 1, 16), start + 50_000_000n, 800_000_000n))
    if (batch.length >= 10_000) {
      await storeSpans(stack.database.db, batch)
      batch = []
    }
  }
  if (batch.length > 0) await storeSpans(stack.database.db, batch)
  await summariseAll(stack.database.db)
}

/** One trace of `count` spans: a root and steps of ten spans, as an agent run would make. */
async function seedLargeTrace(stack: Stack, projectId: string, traceId: string, count: number): Promise<void> {
  const start = BigInt(Date.now() - 3_600_000) * 1_000_000n
  const spans = [span(projectId, traceId, hex(1, 16), null, start, BigInt(count) * 2_000_000n)]
  for (let i = 2; i <= count; i++) {
    const parent = i % 10 === 2 ? hex(1, 16) : hex(i - ((i - 2) % 10), 16)
    spans.push(span(projectId, traceId, hex(i, 16), parent, start + BigInt(i) * 1_000_000n, 900_000n, { name: `step ${i}`, llmModel: null, llmVendor: null, attributes: { 'tool.name': { stringValue: `tool-${i % 7}` } } }))
  }
  await storeSpans(stack.database.db, spans)
  await summariseAll(stack.database.db)
}

/**
 * Milliseconds from the start of the navigation to `selector` being in the page, read in the page
 * itself (a MutationObserver installed before any of the page's scripts run, against the
 * navigation's own clock), so the figure is what the person at the browser waits, without the
 * round trips between this script and the browser.
 */
async function coldLoad(browser: Browser, stack: Stack, cookie: { name: string; value: string }, path: string, selector: string): Promise<{ ms: number; js: Map<string, number> }> {
  const opened = await openConsole(browser, stack.url, signedOutErrors)
  await opened.context.addCookies([{ name: cookie.name, value: cookie.value, url: stack.url }])
  await opened.page.addInitScript((watched: string) => {
    const seen = () => {
      if (document.querySelector(watched) === null) return false
      ;(window as unknown as { firstSeenMs: number }).firstSeenMs = performance.now()
      return true
    }
    const observer = new MutationObserver(() => seen() && observer.disconnect())
    observer.observe(document, { childList: true, subtree: true })
  }, selector)
  const js = new Map<string, number>()
  opened.page.on('response', (response) => {
    const url = new URL(response.url())
    if (url.pathname.endsWith('.js')) js.set(url.pathname, gzippedSize(url.pathname))
  })
  await opened.page.goto(path)
  await opened.page.locator(selector).first().waitFor({ timeout: 60_000 })
  const ms = await opened.page.evaluate(() => (window as unknown as { firstSeenMs?: number }).firstSeenMs ?? performance.now())
  if (opened.problems.length > 0) throw new Error(`${path}: ${opened.problems.join('; ')}`)
  await opened.context.close()
  return { ms, js }
}

/** What the server sends a browser that accepts gzip: the build's .gz copy, or the file gzipped. */
function gzippedSize(pathname: string): number {
  const file = new URL(`.${pathname}`, distDir)
  const gz = new URL(`.${pathname}.gz`, distDir)
  return existsSync(gz) ? statSync(gz).size : gzipSync(readFileSync(file), { level: 9 }).length
}

async function signIn(browser: Browser, stack: Stack): Promise<{ name: string; value: string }> {
  const opened = await openConsole(browser, stack.url, signedOutErrors)
  await opened.page.goto('/sign-in')
  await opened.page.getByLabel('Team API key').fill(stack.teamKey)
  await opened.page.getByRole('button', { name: 'Sign in' }).click()
  await opened.page.waitForURL(/\/traces/)
  const cookie = (await opened.context.cookies()).find((candidate) => candidate.name === 'tw_session')
  await opened.context.close()
  if (!cookie) throw new Error('no session cookie after signing in')
  return cookie
}

async function timeApi(stack: Stack, path: string): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    const response = await fetch(`${stack.url}${path}`, { headers: { 'x-api-key': stack.projectKey } })
    await response.arrayBuffer()
    if (!response.ok) throw new Error(`${path}: ${response.status}`)
    samples.push(performance.now() - started)
  }
  return median(samples)
}

const stack = await startStack({ LOG_LEVEL: 'error' })
const browser = await launchChromium()
try {
  process.stdout.write(`seeding ${traceCount.toLocaleString('en-US')} traces…\n`)
  const seedStarted = performance.now()
  await seedTraces(stack, stack.projectId, traceCount, 1)
  const baseline = await createProject(stack.database.db, { teamId: (await stack.database.db.selectFrom('projects').select('team_id').where('id', '=', stack.projectId).executeTakeFirstOrThrow()).team_id, name: 'Baseline' })
  await seedTraces(stack, baseline.id, 10, 2)
  const largeTraceId = 'f'.repeat(32)
  const smallTraceId = 'e'.repeat(32)
  await seedLargeTrace(stack, stack.projectId, largeTraceId, 5_000)
  await seedLargeTrace(stack, stack.projectId, smallTraceId, 10)
  // Fresh planner statistics, as autovacuum would have gathered on a table that grew this much.
  await sql`analyze spans`.execute(stack.database.db)
  process.stdout.write(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s\n`)

  const cookie = await signIn(browser, stack)
  const measure = async (path: string, selector: string) => {
    const samples: number[] = []
    let js = new Map<string, number>()
    await coldLoad(browser, stack, cookie, path, selector) // warms the server, not the browser
    for (let i = 0; i < runs; i++) {
      const load = await coldLoad(browser, stack, cookie, path, selector)
      samples.push(load.ms)
      js = load.js
    }
    return { ms: median(samples), js }
  }

  // The floor: what a cold profile costs here before any of the console runs (a JSON page).
  const floor = await measure('/healthz', 'body')
  const list = await measure(`/traces?project_id=${stack.projectId}`, 'table.grid tbody tr')
  const listBaseline = await measure(`/traces?project_id=${baseline.id}`, 'table.grid tbody tr')
  const trace = await measure(`/traces/${largeTraceId}?project_id=${stack.projectId}`, '[role=treeitem]')
  const traceBaseline = await measure(`/traces/${smallTraceId}?project_id=${stack.projectId}`, '[role=treeitem]')
  const listApi = await timeApi(stack, `/api/traces?limit=100`)
  const traceApi = await timeApi(stack, `/api/traces/${largeTraceId}`)

  const kb = (bytes: number) => (bytes / 1024).toFixed(1)
  const initialJs = [...list.js.values()].reduce((sum, size) => sum + size, 0)
  const rows = [
    ['a cold page load of /healthz, no console (the floor)', `${floor.ms.toFixed(0)} ms`, '—', ''],
    ['initial JavaScript of the trace list, gzipped', `${kb(initialJs)} KB`, '≤ 250 KB', `${list.js.size} files`],
    [`first render of the trace list, ${traceCount.toLocaleString('en-US')} traces stored`, `${list.ms.toFixed(0)} ms`, '≤ 1000 ms', `${(list.ms / listBaseline.ms).toFixed(2)} × a project of 10 traces (${listBaseline.ms.toFixed(0)} ms); API page alone ${listApi.toFixed(0)} ms`],
    ['opening a 5,000-span trace', `${trace.ms.toFixed(0)} ms`, '≤ 1000 ms', `${(trace.ms / traceBaseline.ms).toFixed(2)} × a 10-span trace (${traceBaseline.ms.toFixed(0)} ms); API alone ${traceApi.toFixed(0)} ms`],
  ]
  process.stdout.write(`\n| measure | median of ${runs} | budget | against the baseline |\n|---|---|---|---|\n`)
  for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`)
  process.stdout.write(`\nJavaScript loaded by the trace list (gzipped): ${[...list.js.entries()].map(([file, size]) => `${file.replace('/assets/', '')} ${kb(size)} KB`).join(', ')}\n`)
} finally {
  await browser.close()
  await stack.stop()
}
