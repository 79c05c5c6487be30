import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AllInOneConfigSchema, ConfigError, ControlPlaneConfigSchema, IngestConfigSchema, JanitorConfigSchema, loadConfig } from '../src/index.ts'

const required = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test', REDIS_URL: 'redis://127.0.0.1:6379' }

describe('loadConfig', () => {
  it('fills defaults and converts numbers', () => {
    const config = loadConfig(IngestConfigSchema, { ...required, PORT: '4100', MAX_SPANS_PER_REQUEST: '50' })
    assert.equal(config.PORT, 4100)
    assert.equal(config.HOST, '0.0.0.0')
    assert.equal(config.MAX_SPANS_PER_REQUEST, 50)
    assert.equal(config.KEY_CACHE_TTL_MS, 5000)
    assert.equal(config.LOG_LEVEL, 'info')
  })

  it('names a missing required variable in one line', () => {
    assert.throws(
      () => loadConfig(IngestConfigSchema, { REDIS_URL: required.REDIS_URL }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message === 'DATABASE_URL is required: a postgres:// connection URL, e.g. postgres://postgres@127.0.0.1:5432/tracewell' &&
        !error.message.includes('\n'),
    )
  })

  it('names a malformed variable and what is expected', () => {
    assert.throws(() => loadConfig(IngestConfigSchema, { ...required, PORT: 'eighty' }), /^ConfigError: PORT is invalid \(.+\): TCP port to listen on \(0–65535\)$/)
    assert.throws(() => loadConfig(IngestConfigSchema, { ...required, PORT: '70000' }), /^ConfigError: PORT is invalid/)
    assert.throws(() => loadConfig(IngestConfigSchema, { ...required, LOG_LEVEL: 'loud' }), /^ConfigError: LOG_LEVEL is invalid/)
    assert.throws(() => loadConfig(IngestConfigSchema, { ...required, REDIS_URL: 'localhost:6379' }), /^ConfigError: REDIS_URL is invalid/)
  })

  it('refuses a revocation bound above 5 s', () => {
    assert.throws(() => loadConfig(IngestConfigSchema, { ...required, KEY_CACHE_TTL_MS: '6000' }), /^ConfigError: KEY_CACHE_TTL_MS is invalid/)
  })

  it('checks MASKING_DEFAULT_RULES as the API checks a project’s rules, naming the rule', () => {
    const load = (rules: string) => () => loadConfig(IngestConfigSchema, { ...required, MASKING_DEFAULT_RULES: rules })
    assert.throws(load(JSON.stringify([{ detector: 'regex', pattern: '(a)\\1' }])), /^ConfigError: MASKING_DEFAULT_RULES is invalid: \/0\/pattern: error parsing regexp: invalid escape sequence/)
    assert.throws(load('[{"detector":"name"}]'), /^ConfigError: MASKING_DEFAULT_RULES is invalid: \/0\/detector: must be one of email, phone/)
    assert.throws(load('[{"detector":"email","extra":1}]'), /^ConfigError: MASKING_DEFAULT_RULES is invalid: \/0\/extra: /)
    assert.throws(load('{'), /^ConfigError: MASKING_DEFAULT_RULES is invalid: not JSON/)
    assert.equal(loadConfig(ControlPlaneConfigSchema, { DATABASE_URL: required.DATABASE_URL, MASKING_DEFAULT_RULES: '[{"detector":"secret"}]' }).MASKING_DEFAULT_RULES, '[{"detector":"secret"}]')
    assert.equal(loadConfig(IngestConfigSchema, required).MASKING_DEFAULT_RULES, '[]')
  })

  it('treats an empty value as unset', () => {
    const config = loadConfig(JanitorConfigSchema, { DATABASE_URL: required.DATABASE_URL, CRON_API_KEY: '' })
    assert.equal(config.CRON_API_KEY, undefined)
  })

  it('lets the all-in-one process run without Postgres or Redis', () => {
    const config = loadConfig(AllInOneConfigSchema, {})
    assert.equal(config.DATABASE_URL, undefined)
    assert.equal(config.REDIS_URL, undefined)
    assert.equal(config.PORT, 3000)
    assert.equal(config.DATA_DIR, '.data')
  })

  it('refuses an ADMIN_API_KEY or CRON_API_KEY that is short or holds whitespace', () => {
    const database = { DATABASE_URL: required.DATABASE_URL }
    const secret = 'cron-secret-0123456789abcdef0123456789'
    assert.equal(loadConfig(JanitorConfigSchema, { ...database, CRON_API_KEY: secret }).CRON_API_KEY, secret)
    assert.equal(loadConfig(ControlPlaneConfigSchema, { ...database, ADMIN_API_KEY: secret }).ADMIN_API_KEY, secret)
    for (const bad of ['short', 'x'.repeat(31), ' '.repeat(40), '\t'.repeat(32), `${secret} `, `with space ${secret}`]) {
      assert.throws(
        () => loadConfig(JanitorConfigSchema, { ...database, CRON_API_KEY: bad }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.startsWith('CRON_API_KEY is invalid (') &&
          error.message.endsWith('): secret expected in the cron-api-key header (at least 32 printable characters, no spaces); unset leaves cleanup open'),
        JSON.stringify(bad),
      )
      assert.throws(() => loadConfig(ControlPlaneConfigSchema, { ...database, ADMIN_API_KEY: bad }), /^ConfigError: ADMIN_API_KEY is invalid/, JSON.stringify(bad))
      assert.throws(() => loadConfig(AllInOneConfigSchema, { CRON_API_KEY: bad }), /^ConfigError: CRON_API_KEY is invalid/, JSON.stringify(bad))
    }
  })

  it('requires bootstrap keys of at least 32 characters', () => {
    assert.throws(() => loadConfig(AllInOneConfigSchema, { INIT_PROJECT_API_KEY: 'short' }), /^ConfigError: INIT_PROJECT_API_KEY is invalid/)
  })
})

describe('REDIS_URL or REDIS_CLUSTER_NODES', () => {
  const database = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' }
  it('requires one of them of ingest, naming both', () => {
    assert.throws(() => loadConfig(IngestConfigSchema, database), /^ConfigError: REDIS_URL or REDIS_CLUSTER_NODES is required: REDIS_URL \(a redis:\/\/ connection URL/)
  })
  it('refuses both at once, also where a queue is optional', () => {
    const both = { ...database, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: '127.0.0.1:7000' }
    assert.throws(() => loadConfig(IngestConfigSchema, both), /^ConfigError: REDIS_URL and REDIS_CLUSTER_NODES are both set: set only one of them$/)
    assert.throws(() => loadConfig(AllInOneConfigSchema, both), /are both set/)
  })
  it('takes a cluster seed list and refuses a malformed one', () => {
    const config = loadConfig(IngestConfigSchema, { ...database, REDIS_CLUSTER_NODES: 'redis-0:6379,10.0.0.2:7001', QUEUE_SHARDS: '6' })
    assert.equal(config.REDIS_CLUSTER_NODES, 'redis-0:6379,10.0.0.2:7001')
    assert.equal(config.QUEUE_SHARDS, 6)
    assert.throws(() => loadConfig(IngestConfigSchema, { ...database, REDIS_CLUSTER_NODES: 'redis://redis-0:6379' }), /^ConfigError: REDIS_CLUSTER_NODES is invalid/)
  })
  it('lets npm start run with neither (the in-process queue)', () => {
    assert.equal(loadConfig(AllInOneConfigSchema, {}).REDIS_CLUSTER_NODES, undefined)
  })
})

describe('the outbound policy settings', () => {
  it('allow nothing by default, and bound replies at 10 MiB', () => {
    const config = loadConfig(AllInOneConfigSchema, {})
    assert.deepEqual([config.OUTBOUND_ALLOW_CIDRS, config.OUTBOUND_MAX_RESPONSE_BYTES, config.OUTBOUND_CONNECT_TIMEOUT_MS], [undefined, 10_485_760, 10_000])
  })
  it('take a comma-separated list of IPv4 and IPv6 CIDRs, and refuse anything else', () => {
    const allowing = (list: string) => loadConfig(ControlPlaneConfigSchema, { DATABASE_URL: required.DATABASE_URL, OUTBOUND_ALLOW_CIDRS: list }).OUTBOUND_ALLOW_CIDRS
    assert.equal(allowing('127.0.0.1/32, 10.20.0.0/16,fd00:1::/64'), '127.0.0.1/32, 10.20.0.0/16,fd00:1::/64')
    for (const list of ['localhost', '127.0.0.1', '10.0.0.0/33', '300.1.1.1/8', '::1/129', '127.0.0.1/32;10.0.0.0/8']) {
      assert.throws(() => allowing(list), /^ConfigError: OUTBOUND_ALLOW_CIDRS is invalid/, list)
    }
  })
})
