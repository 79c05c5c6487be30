// The servers a benchmark measures, each in a process of its own so that the load generator in
// the benchmark's process never shares their event loop. Every one runs with the services' Node
// flags (service-node-flags.ts).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { benchNodeFlags, nodeFlagsOf, triedIngestNodeFlags, triedNodeFlags, triedWriterNodeFlags, typescriptSourcesFlags } from './service-node-flags.ts'

export { freePort } from '@tracewell/test-support'

const repoRoot = fileURLToPath(new URL('../../', import.meta.url))

/**
 * Runs a benchmark script again as a server (`node <script> ...args`): the child listens on a
 * port of its choosing and prints `{"port":n}` as its first line of output.
 */
export async function startScriptServer(scriptUrl: string, args: readonly string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...benchNodeFlags, fileURLToPath(scriptUrl), ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  const exited = once(child, 'exit').then(() => {
    throw new Error(`${args.join(' ')} server exited`)
  })
  const [line] = (await Promise.race([once(lines, 'line'), exited])) as [string]
  return { child, port: (JSON.parse(line) as { port: number }).port }
}

/** Prints the port a benchmark's child server listens on, for startScriptServer. */
export function announcePort(server: { address(): unknown }): void {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`)
}

/**
 * Whether the services run as in the image, from the bundles of `npm run build:services`
 * (BENCH_SERVICES=bundles), instead of from their TypeScript sources as in development. The
 * bundles leave out what type stripping keeps in memory, so peak RSS differs
 * (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
 */
export const servicesFromBundles = process.env.BENCH_SERVICES === 'bundles'
let bundlesBuilt = false

/** What `node` runs for the service whose sources start at `entry`: that, or its bundle (built once per benchmark run). */
export function runnableEntry(entry: string): string {
  if (!servicesFromBundles || !entry.endsWith('/src/server.ts')) return entry
  if (!bundlesBuilt) execFileSync('npm', ['run', 'build:services'], { cwd: repoRoot, stdio: 'ignore' })
  bundlesBuilt = true
  return entry.replace(/\/src\/server\.ts$/, '/dist/server.mjs')
}

/** How the services are run in this benchmark, for its report: sources or bundles, and any flags tried. */
export function servicesRunAs(): string {
  const tried = [...triedNodeFlags.map((flag) => `${flag} (all)`), ...triedWriterNodeFlags.map((flag) => `${flag} (writer)`), ...triedIngestNodeFlags.map((flag) => `${flag} (ingest)`)]
  return `services from their ${servicesFromBundles ? 'bundles (npm run build:services)' : 'TypeScript sources'}${tried.length > 0 ? `, flags tried: ${tried.join(' ')}` : ''}`
}

/**
 * Starts one of the services (`apps/<name>/src/server.ts`, or its bundle: runnableEntry) with only
 * `env` (from sources, as the start scripts run it: typescriptSourcesFlags), and waits for its /readyz.
 */
export async function startService(entry: string, env: Record<string, string>, port: number): Promise<ChildProcess> {
  const runnable = runnableEntry(entry)
  const sourcesFlags = runnable.endsWith('.ts') ? typescriptSourcesFlags : []
  const child = spawn(process.execPath, [...sourcesFlags, ...nodeFlagsOf(entry), `${repoRoot}${runnable}`], {
    env: { ...env, PORT: String(port), GRPC_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${entry} exited with ${child.exitCode}`)
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined)
    if (ready?.status === 200) return child
    await sleep(100)
  }
  throw new Error(`${entry} not ready within 30 s`)
}

/** SIGTERM, then SIGKILL if the child has not exited within 10 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const exited = once(child, 'exit')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}
