import assert from 'node:assert/strict'
import { it } from 'node:test'
import { testEnvironment } from '../src/index.ts'

// Tests create a database per file: they must do it where TEST_DATABASE_URL says, or on the local
// server, never on the DATABASE_URL a developer's `npm start` points at.

it('reads TEST_DATABASE_URL and TEST_REDIS_URL, never DATABASE_URL and REDIS_URL', () => {
  const production = { DATABASE_URL: 'postgres://app@db.example.com:5432/tracewell', REDIS_URL: 'redis://cache.example.com:6379' }
  assert.deepEqual(testEnvironment(production), { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres', REDIS_URL: 'redis://127.0.0.1:6379' })
  assert.deepEqual(testEnvironment({ ...production, TEST_DATABASE_URL: 'postgres://postgres@127.0.0.1:7201/postgres', TEST_REDIS_URL: 'redis://127.0.0.1:7202' }), {
    DATABASE_URL: 'postgres://postgres@127.0.0.1:7201/postgres',
    REDIS_URL: 'redis://127.0.0.1:7202',
  })
})
