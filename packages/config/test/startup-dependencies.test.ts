import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pino } from 'pino'
import { StartupDependencyError, waitForDependencies, type StartupDependency } from '../src/index.ts'

// The retry loop over dependencies that fail as scripted; the real probes against closed ports
// are exercised end to end (e2e/test/startup.test.ts).

function captured() {
  const lines: Array<Record<string, unknown>> = []
  const logger = pino({}, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) })
  return { lines, logger }
}

/** A dependency whose first `failures` probes reject with `error`. */
function scripted(failures: number, error: Error, permanent = false): StartupDependency & { probes: number } {
  const dependency = {
    name: 'Postgres',
    address: 'db.internal:5432',
    probes: 0,
    async probe() {
      dependency.probes++
      if (dependency.probes <= failures) throw error
    },
    isPermanent: () => permanent,
  }
  return dependency
}

const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' })

describe('waitForDependencies', () => {
  it('answers at once: no line at all', async () => {
    const { lines, logger } = captured()
    await waitForDependencies([scripted(0, refused)], { retrySeconds: 5, logger })
    assert.deepEqual(lines, [])
  })

  it('retries with backoff, says so once, and says when it answers', async () => {
    const { lines, logger } = captured()
    const dependency = scripted(3, refused)
    await waitForDependencies([dependency], { retrySeconds: 30, logger })
    assert.equal(dependency.probes, 4)
    assert.deepEqual(
      lines.map(({ level, msg, dependency: name, address, cause }) => ({ level, msg, name, address, cause })),
      [
        { level: 40, msg: 'Postgres at db.internal:5432 is unreachable (connect ECONNREFUSED 10.0.0.7:5432); retrying for up to 30 s', name: 'postgres', address: 'db.internal:5432', cause: 'connect ECONNREFUSED 10.0.0.7:5432' },
        { level: 30, msg: 'Postgres at db.internal:5432 answers', name: 'postgres', address: 'db.internal:5432', cause: undefined },
      ],
    )
  })

  it('gives up after the retry time with one more line', async () => {
    const { lines, logger } = captured()
    const dependency = scripted(Number.POSITIVE_INFINITY, refused)
    const started = Date.now()
    await assert.rejects(waitForDependencies([dependency], { retrySeconds: 1, logger }), StartupDependencyError)
    assert.ok(Date.now() - started >= 1_000)
    // Backoff of 250 ms, then 500 ms, …: a few probes within the second, not a busy loop.
    assert.ok(dependency.probes >= 2 && dependency.probes <= 5, `${dependency.probes} probes`)
    assert.deepEqual(lines.map((line) => [line.level, line.msg]), [
      [40, 'Postgres at db.internal:5432 is unreachable (connect ECONNREFUSED 10.0.0.7:5432); retrying for up to 1 s'],
      [60, 'Postgres at db.internal:5432 is still unreachable after 1 s (connect ECONNREFUSED 10.0.0.7:5432); exiting'],
    ])
  })

  it('stops at once on an answer that waiting will not change', async () => {
    const { lines, logger } = captured()
    const dependency = scripted(1, new Error('password authentication failed for user "tracewell"'), true)
    await assert.rejects(waitForDependencies([dependency], { retrySeconds: 30, logger }), StartupDependencyError)
    assert.equal(dependency.probes, 1)
    assert.deepEqual(lines.map((line) => [line.level, line.msg]), [[60, 'Postgres at db.internal:5432 refused: password authentication failed for user "tracewell"; exiting']])
  })
})
