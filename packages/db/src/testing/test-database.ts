import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { testEnvironment } from '@tracewell/config'
import pg from 'pg'
import { createDb, type Db } from '../create-db.ts'
import { migrateToLatest } from '../migrator.ts'

// Every test file gets a database of its own, cloned from a migrated template, so files run in
// parallel and no test sees another's rows (the Trigger.dev pattern). The template's name carries
// a hash of the migrations, so changing a migration builds a fresh template, and the UTC day it
// was built: the migrations make the day partitions around the day they run (the day before to
// three days ahead), so a template is only the day's. One built the evening before made a janitor
// test with a day's retention see yesterday's partitions expire (a CI run after midnight).

const migrationsDir = new URL('../migrations/', import.meta.url)
const TEMPLATE_PREFIX = 'tracewell_template_'

function templateName(): string {
  const hash = createHash('sha256')
  // Recursive: the frozen copies under migrations/frozen are part of what the migrations do.
  const files = readdirSync(migrationsDir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts')).sort()
  for (const file of files) hash.update(file).update(readFileSync(new URL(file, migrationsDir)))
  const utcDay = new Date().toISOString().slice(0, 10).replaceAll('-', '')
  return `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 12)}_${utcDay}`
}

/**
 * Drops the templates of other days than `built`'s (and those named before templates had a day),
 * so that a machine keeps one a day at most per set of migrations. The day is read from the name
 * just built, not the clock, which may have passed midnight since. A template some run is cloning
 * at this moment cannot be dropped, and is left for the next build.
 */
async function dropOldTemplates(client: pg.Client, built: string): Promise<void> {
  const day = built.slice(built.lastIndexOf('_'))
  const { rows } = await client.query<{ name: string }>('select datname as name from pg_database where datname like $1', [`${TEMPLATE_PREFIX}%`])
  for (const { name } of rows) {
    if (name.endsWith(day) || name.endsWith('_building')) continue
    await client.query(`drop database if exists "${name}"`).catch(() => {})
  }
}

function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
}

async function withAdminClient<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

async function ensureTemplate(adminUrl: string, template: string): Promise<void> {
  await withAdminClient(adminUrl, async (client) => {
    // Parallel test files race to build the template; one builds, the others wait for it.
    await client.query('select pg_advisory_lock(hashtext($1))', [template])
    try {
      const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [template])
      if (rowCount) return
      const building = `${template}_building`
      await client.query(`drop database if exists "${building}"`)
      await client.query(`create database "${building}"`)
      const db = createDb({ databaseUrl: databaseUrl(adminUrl, building), poolSize: 1 })
      try {
        await migrateToLatest(db)
      } finally {
        await db.destroy()
      }
      await client.query(`alter database "${building}" rename to "${template}"`)
      await dropOldTemplates(client, template)
    } finally {
      await client.query('select pg_advisory_unlock(hashtext($1))', [template])
    }
  })
}

// A clone's name carries the pid of the test process that made it: a run that was killed never
// dropped its clones, and the next run on this machine drops every clone whose process is gone.
const testDatabasePrefix = 'tracewell_test_'

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function dropDatabasesOfDeadRuns(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ datname: string }>(`select datname from pg_database where datname like 'tracewell\\_test\\_%'`)
  for (const { datname } of rows) {
    const pid = Number(/^tracewell_test_(\d+)_[0-9a-f]+$/.exec(datname)?.[1])
    // A name without a pid may belong to a running checkout that names clones the old way.
    if (!Number.isInteger(pid) || processIsAlive(pid)) continue
    await client.query(`drop database if exists "${datname}" with (force)`)
  }
}

export interface TestDatabase {
  db: Db
  /** The clone's connection URL, for services started as separate processes. */
  url: string
  /** Closes the pool and drops the clone. */
  drop(): Promise<void>
}

/**
 * A fresh, migrated Postgres database for one test file; with `migrated: false` an empty one
 * (for tests of the migrations themselves).
 */
export async function createTestDatabase(options: { poolSize?: number; migrated?: boolean } = {}): Promise<TestDatabase> {
  const { DATABASE_URL: adminUrl } = testEnvironment()
  const name = `${testDatabasePrefix}${process.pid}_${randomBytes(6).toString('hex')}`
  await withAdminClient(adminUrl, (client) => dropDatabasesOfDeadRuns(client))
  if (options.migrated === false) {
    await withAdminClient(adminUrl, (client) => client.query(`create database "${name}"`))
  } else {
    const template = templateName()
    await ensureTemplate(adminUrl, template)
    await withAdminClient(adminUrl, (client) => client.query(`create database "${name}" template "${template}"`))
  }
  const url = databaseUrl(adminUrl, name)
  const db = createDb({ databaseUrl: url, poolSize: options.poolSize ?? 5 })
  return {
    db,
    url,
    async drop() {
      await db.destroy()
      await withAdminClient(adminUrl, (client) => client.query(`drop database if exists "${name}" with (force)`))
    },
  }
}

/** A fresh, migrated embedded (PGlite, in-memory) database; with `migrated: false` an empty one. */
export async function createEmbeddedTestDatabase(options: { migrated?: boolean } = {}): Promise<{ db: Db; drop(): Promise<void> }> {
  const db = createDb({ dataDir: 'memory://' })
  if (options.migrated !== false) await migrateToLatest(db)
  return { db, drop: () => db.destroy() }
}
