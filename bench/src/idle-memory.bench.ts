// npm run bench:memory — the resident memory of each service at rest, run as in development (the
// TypeScript sources through Node's type stripping, with the start scripts' stripped-source cache) and as
// in the image (the bundles of `npm run build:services`, which this script builds first), with the
// services' V8 flags, and bare Node as the floor. Target (issue 49 §7): every service ≤ 100 MiB
// idle from sources; the bundles no worse. Each service is started four times per form, the forms
// alternating; that cache is emptied first, so the first start from sources is the one
// after a change to every source file, and is reported apart. A reading is VmRSS once /readyz has
// answered and the process has then sat idle for a few seconds. Runs ~3 minutes.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { testEnvironment } from '@tracewell/config'
import { createTestDatabase } from '@tracewell/db/testing'
import { freePort, startService, stopChild } from './child-processes.ts'
import { serviceNodeFlags, strippedSourcesDirectory } from './service-node-flags.ts'

const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const repetitions = 4
const idleSeconds = 5
const targetMiB = 100

const services = ['ingest', 'control-plane', 'janitor', 'writer', 'evaluator'] as const

/** Resident memory now (VmRSS), in MiB. */
function rssMiB(pid: number): number {
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN)
  return kib / 1024
}

async function idleRss(child: ChildProcess): Promise<number> {
  await sleep(idleSeconds * 1000)
  return rssMiB(child.pid as number)
}

/** Bare Node with the same flags, doing nothing: the floor every service stands on. */
async function bareNodeRss(): Promise<number> {
  const child = spawn(process.execPath, [...serviceNodeFlags, '-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
  try {
    return await idleRss(child)
  } finally {
    await stopChild(child)
  }
}

const range = (values: readonly number[]) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`

async function main(): Promise<void> {
  execFileSync('npm', ['run', 'build:services'], { cwd: repoRoot, stdio: 'ignore' })
  const { REDIS_URL } = testEnvironment()
  const database = await createTestDatabase()
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL,
    QUEUE_PREFIX: `bench-memory-${process.pid}`,
    SESSION_SECRET: 'bench-memory-session-secret-0123456789abcdef',
    LLM_CONNECTION_ENCRYPTION_KEY: '0123456789abcdef'.repeat(4),
    PATH: process.env.PATH ?? '',
  }
  const readings = new Map<string, number[]>()
  const record = (key: string, value: number) => readings.set(key, [...(readings.get(key) ?? []), value])
  rmSync(strippedSourcesDirectory, { recursive: true, force: true })
  try {
    for (let round = 1; round <= repetitions; round++) {
      record('bare node', await bareNodeRss())
      for (const service of services) {
        for (const form of ['sources', 'bundle'] as const) {
          const entry = form === 'sources' ? `apps/${service}/src/server.ts` : `apps/${service}/dist/server.mjs`
          const child = await startService(entry, env, await freePort())
          try {
            record(`${service} ${form}${form === 'sources' && round === 1 ? ' first' : ''}`, await idleRss(child))
          } finally {
            await stopChild(child)
          }
        }
      }
      process.stdout.write(`  round ${round} done\n`)
    }
  } finally {
    await database.drop()
  }
  process.stdout.write(`\nidle RSS in MiB (range of ${repetitions} starts; from sources, the first apart), flags ${serviceNodeFlags.join(' ')}:\n`)
  process.stdout.write(`bare node: ${range(readings.get('bare node') ?? [])}\n`)
  const judged = (values: number[]) => (Math.max(...values) <= targetMiB ? 'PASS' : 'FAIL')
  for (const service of services) {
    const sources = readings.get(`${service} sources`) ?? []
    const first = readings.get(`${service} sources first`) ?? []
    const bundle = readings.get(`${service} bundle`) ?? []
    process.stdout.write(
      `${service}: sources ${range(sources)} (≤ ${targetMiB}: ${judged(sources)}), first start ${range(first)} (${judged(first)}), bundle ${range(bundle)} (${judged(bundle)})\n`,
    )
  }
}

await main()
