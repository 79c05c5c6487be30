import { displayPrefix, generateApiKey, hashApiKey } from '@tracewell/auth'
import { type IngestConfig, IngestConfigSchema, loadConfig, testEnvironment } from '@tracewell/config'
import { createProject, createTeam, insertApiKey, type Db } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import type { App } from '@tracewell/http'
import type { SpanRecord } from '@tracewell/otlp'
import { QueueNames, type SpanBatchJob, type SpanBatchProducer } from '@tracewell/queue'
import { spansOfJob } from '@tracewell/writer'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { buildApp } from '../../src/app.ts'

export const testEnv = testEnvironment()

export interface Tenant {
  teamId: string
  projectId: string
  projectKey: string
  teamKey: string
}

/** A team with one project, a project key and a team key, straight through the repositories. */
export async function createTenant(db: Db, name = 'ingest-test'): Promise<Tenant & { projectKeyId: string }> {
  const team = await createTeam(db, { name })
  const project = await createProject(db, { teamId: team.id, name: `${name}-project` })
  const projectKey = generateApiKey('project')
  const teamKey = generateApiKey('team')
  const inserted = await insertApiKey(db, { kind: 'project', teamId: team.id, projectId: project.id, keyHash: hashApiKey(projectKey), prefix: displayPrefix(projectKey) })
  await insertApiKey(db, { kind: 'team', teamId: team.id, projectId: null, keyHash: hashApiKey(teamKey), prefix: displayPrefix(teamKey) })
  return { teamId: team.id, projectId: project.id, projectKey, teamKey, projectKeyId: inserted.id }
}

export interface IngestHarness {
  app: App
  config: IngestConfig
  database: TestDatabase
  tenant: Tenant & { projectKeyId: string }
  prefix: string
  /** The BullMQ queue the app writes to, for inspecting jobs. */
  queue: Queue<SpanBatchJob>
  /** Every span in waiting jobs, in job order. */
  queuedSpans(): Promise<Array<{ projectId: string; span: SpanRecord }>>
  close(): Promise<void>
}

/**
 * The ingest app over a fresh database (the file's own) and a queue prefix of its own, with the
 * real BullMQ producer unless one is given. Settings default to a fast key cache TTL.
 */
export async function startIngest(
  settings: Record<string, string> = {},
  options: { producer?: SpanBatchProducer; database?: TestDatabase } = {},
): Promise<IngestHarness> {
  const database = options.database ?? (await createTestDatabase())
  const prefix = testQueuePrefix('ingest')
  const config = loadConfig(IngestConfigSchema, {
    DATABASE_URL: database.url,
    REDIS_URL: testEnv.REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    KEY_CACHE_TTL_MS: '200',
    ...settings,
  })
  const app = await buildApp(config, { db: database.db, ...(options.producer ? { producer: options.producer } : {}) })
  await app.ready()
  const tenant = await createTenant(database.db)
  const queue = new Queue<SpanBatchJob>(QueueNames.spanBatches, { connection: { url: testEnv.REDIS_URL }, prefix })
  const payloads = new Redis(testEnv.REDIS_URL)
  return {
    app,
    config,
    database,
    tenant,
    prefix,
    queue,
    async queuedSpans() {
      const jobs = await queue.getJobs(['wait', 'prioritized', 'delayed', 'active', 'completed'], 0, -1, true)
      // Read and decoded as the writer reads them.
      const batches = await Promise.all(jobs.map((job) => spansOfJob(payloads, job.data)))
      return batches.flat().flatMap((batch) => batch.spans.map((span) => ({ projectId: batch.projectId, span })))
    },
    async close() {
      await app.close()
      await queue.obliterate({ force: true }).catch(() => {})
      await queue.close()
      payloads.disconnect()
      if (!options.database) await database.drop()
    },
  }
}
