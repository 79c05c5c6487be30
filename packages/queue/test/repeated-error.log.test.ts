import assert from 'node:assert/strict'
import { it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { repeatedErrorLog } from '../src/index.ts'

it('logs an error repeated thousands of times once per window, with how many it left unlogged', { timeout: 10_000 }, async () => {
  const lines: Array<{ obj: object; msg: string }> = []
  const logger = { info() {}, error() {}, warn: (obj: object, msg: string) => void lines.push({ obj, msg }) }
  const report = repeatedErrorLog(logger, 'span-batch worker error', 200)
  for (let i = 0; i < 10_000; i++) report(new Error('CROSSSLOT Keys in request don\'t hash to the same slot'))
  assert.deepEqual(lines, [{ obj: { err: { message: "CROSSSLOT Keys in request don't hash to the same slot" } }, msg: 'span-batch worker error' }])
  await sleep(250)
  report(new Error('Connection is closed.'))
  assert.deepEqual(lines[1], { obj: { err: { message: 'Connection is closed.' }, suppressedSinceLast: 9_999 }, msg: 'span-batch worker error' })
})
