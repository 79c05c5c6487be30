import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { testEnvironment } from '@tracewell/config'
import { createDb, sql } from '@tracewell/db'

const run = promisify(execFile)
const { DATABASE_URL: adminUrl, REDIS_URL } = testEnvironment()
const serverPath = fileURLToPath(new URL('../src/server.ts', import.meta.url))

test('the writer refuses to start on a database whose schema is behind', async () => {
  const name = `tracewell_unmigrated_${randomBytes(6).toString('hex')}`
  const admin = createDb({ databaseUrl: adminUrl, poolSize: 1 })
  await sql.raw(`create database "${name}"`).execute(admin)
  try {
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    const env = { ...process.env, DATABASE_URL: url.toString(), REDIS_URL, PORT: '0', LOG_LEVEL: 'silent' }
    const outcome = await run(process.execPath, [serverPath], { env, timeout: 20_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    )
    assert.equal(outcome.code, 1)
    assert.match(outcome.stderr, /^writer cannot start: the database is behind: \d+ migration\(s\) not applied \(.+\); run `npm run migrate`\n$/)
  } finally {
    await sql.raw(`drop database if exists "${name}" with (force)`).execute(admin)
    await admin.destroy()
  }
})
