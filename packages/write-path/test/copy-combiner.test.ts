import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { countSpans, sql, type Db, type SpanFields } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { CopyCombiner, storeSpans, type ProjectSpanSource } from '../src/index.ts'
import { spanGenerator } from './support/random-spans.ts'

const { randomSpan } = spanGenerator(31)
const spans = (count: number): SpanFields[] => Array.from({ length: count }, () => randomSpan(false))
const source = (projectId: string, fields: readonly SpanFields[]): ProjectSpanSource => ({ projectId, spans: () => fields })
const deltaRows = async (db: Db) => Number((await sql<{ n: string }>`select count(*) as n from summary_deltas`.execute(db)).rows[0]?.n)

describe('CopyCombiner on postgres', () => {
  let database: TestDatabase
  let combiner: CopyCombiner
  before(async () => {
    database = await createTestDatabase()
    combiner = new CopyCombiner(database.db, { maxSpans: 1_000, maxInFlight: 1, maxOpenMs: 60_000 })
  })
  after(() => database.drop())

  it('stores jobs ready together in one COPY, one transaction and one summary delta, each told its own spans', async () => {
    const before = await deltaRows(database.db)
    const outcomes = await Promise.all([
      combiner.copy([source('a', spans(3))], 3),
      combiner.copy([source('b', spans(5)), source('c', spans(2))], 7),
      combiner.copy([source('a', spans(1))], 1),
    ])
    assert.deepEqual(outcomes, [{ inserted: 3 }, { inserted: 7 }, { inserted: 1 }])
    assert.deepEqual([await countSpans(database.db, 'a'), await countSpans(database.db, 'b'), await countSpans(database.db, 'c')], [4, 5, 2])
    assert.equal((await deltaRows(database.db)) - before, 1)
  })

  it('sends every job of a COPY that met a stored span to be tried alone, and a job alone to the statements', async () => {
    const stored = spans(4).map((span) => ({ ...span, projectId: 'redelivered' }))
    await storeSpans(database.db, stored)
    const fresh = spans(6)
    assert.deepEqual(await Promise.all([combiner.copy([source('redelivered', stored)], 4), combiner.copy([source('fresh', fresh)], 6)]), ['alone', 'alone'])
    assert.equal(await countSpans(database.db, 'fresh'), 0, 'nothing of the rolled back COPY is stored')
    assert.equal(await combiner.copy([source('redelivered', stored)], 4), 'statements')
    assert.deepEqual(await combiner.copy([source('fresh', fresh)], 6), { inserted: 6 })
  })

  it('lets a failure land on the job that caused it: tried alone, it rejects; its neighbours are stored', async () => {
    const failing: ProjectSpanSource = {
      projectId: 'broken',
      spans() {
        throw new Error('the body no longer decodes')
      },
    }
    const neighbour = spans(3)
    assert.deepEqual(await Promise.all([combiner.copy([failing], 2), combiner.copy([source('neighbour', neighbour)], 3)]), ['alone', 'alone'])
    await assert.rejects(combiner.copy([failing], 2), /no longer decodes/)
    assert.deepEqual(await combiner.copy([source('neighbour', neighbour)], 3), { inserted: 3 })
  })

  it('keeps a COPY within maxSpans: a job that does not fit waits for the next one, a later one that fits does not', async () => {
    const small = new CopyCombiner(database.db, { maxSpans: 5, maxInFlight: 1, maxOpenMs: 60_000 })
    const before = await deltaRows(database.db)
    const order: string[] = []
    const copy = (label: string, count: number) => small.copy([source('bounded', spans(count))], count).then((outcome) => (order.push(label), outcome))
    const outcomes = await Promise.all([copy('first 4', 4), copy('second 4', 4), copy('1', 1)])
    assert.deepEqual(outcomes, [{ inserted: 4 }, { inserted: 4 }, { inserted: 1 }])
    assert.equal((await deltaRows(database.db)) - before, 2, 'two COPYs: 4 + 1, then 4')
    assert.deepEqual(order, ['first 4', '1', 'second 4'], 'the 1-span job went in the first COPY, past the 4 that did not fit')
  })

  it('ends a COPY open maxOpenMs between two jobs: the jobs not begun go first into the next', async () => {
    const timed = new CopyCombiner(database.db, { maxSpans: 1_000, maxInFlight: 1, maxOpenMs: 50 })
    const before = await deltaRows(database.db)
    const order: string[] = []
    // A job whose body takes 80 ms to decode, as a large one does on a loaded machine.
    const slow = (count: number): ProjectSpanSource => ({
      projectId: 'timed',
      spans() {
        const until = performance.now() + 80
        while (performance.now() < until);
        return spans(count)
      },
    })
    const copy = (label: string, job: ProjectSpanSource[], count: number) => timed.copy(job, count).then((outcome) => (order.push(label), outcome))
    const outcomes = await Promise.all([copy('slow 2', [slow(2)], 2), copy('slow 3', [slow(1), slow(2)], 3), copy('quick 4', [source('timed', spans(4))], 4)])
    assert.deepEqual(outcomes, [{ inserted: 2 }, { inserted: 3 }, { inserted: 4 }])
    assert.equal(await countSpans(database.db, 'timed'), 9)
    assert.equal((await deltaRows(database.db)) - before, 3, 'three COPYs: each ended once open 50 ms, between two jobs, never inside one')
    assert.deepEqual(order, ['slow 2', 'slow 3', 'quick 4'])
  })

  it('lingers: jobs that arrive one by one within lingerMs of the first share its COPY', async () => {
    const arriving = async (combiner: CopyCombiner, projectId: string) => {
      const before = await deltaRows(database.db)
      const copies: Array<Promise<unknown>> = []
      for (let job = 0; job < 4; job++) {
        copies.push(combiner.copy([source(projectId, spans(2))], 2))
        await sleep(15)
      }
      assert.deepEqual(await Promise.all(copies), Array.from({ length: 4 }, () => ({ inserted: 2 })))
      assert.equal(await countSpans(database.db, projectId), 8)
      return (await deltaRows(database.db)) - before
    }
    // A writer that keeps up: each job alone is ready before the next arrives.
    const eager = await arriving(new CopyCombiner(database.db, { maxSpans: 1_000, maxInFlight: 2, maxOpenMs: 60_000 }), 'eager')
    assert.ok(eager > 1, `without a linger, a COPY for each job or two (${eager})`)
    assert.equal(await arriving(new CopyCombiner(database.db, { maxSpans: 1_000, maxInFlight: 2, maxOpenMs: 60_000, lingerMs: 1_000 }), 'lingering'), 1, 'with one, a COPY for the four')
  })

  it('ends the linger once lingerUntilJobs jobs of one holder or lingerUntilSpans spans wait', async () => {
    const combiner = (until: { lingerUntilJobs?: number; lingerUntilSpans?: number }) =>
      new CopyCombiner(database.db, { maxSpans: 1_000, maxInFlight: 2, maxOpenMs: 60_000, lingerMs: 60_000, ...until })
    const byJobs = combiner({ lingerUntilJobs: 3 })
    const started = performance.now()
    const first = byJobs.copy([source('until-jobs', spans(1))], 1)
    await sleep(10)
    await Promise.all([first, byJobs.copy([source('until-jobs', spans(1))], 1), byJobs.copy([source('until-jobs', spans(1))], 1)])
    const bySpans = combiner({ lingerUntilSpans: 10 })
    const small = bySpans.copy([source('until-spans', spans(4))], 4)
    await sleep(10)
    await Promise.all([small, bySpans.copy([source('until-spans', spans(6))], 6)])
    // Two holders (a writer's shards) with a job each linger on; the second job of one ends it.
    const byHolder = combiner({ lingerUntilJobs: 2 })
    const shardA = byHolder.copy([source('until-holder', spans(1))], 1, 'usual', 'shard a')
    const shardB = byHolder.copy([source('until-holder', spans(1))], 1, 'usual', 'shard b')
    await sleep(50)
    assert.equal(await countSpans(database.db, 'until-holder'), 0, 'one job of each holder lingers')
    await Promise.all([shardA, shardB, byHolder.copy([source('until-holder', spans(1))], 1, 'usual', 'shard a')])
    assert.ok(performance.now() - started < 30_000, 'stored long before the 60 s linger ran out')
    assert.deepEqual([await countSpans(database.db, 'until-jobs'), await countSpans(database.db, 'until-spans'), await countSpans(database.db, 'until-holder')], [3, 10, 3])
  })

  it('puts express jobs first, and starts one COPY of them beyond maxInFlight while the usual ones run', async () => {
    const lanes = new CopyCombiner(database.db, { maxSpans: 5, maxInFlight: 1, maxOpenMs: 60_000 })
    const order: string[] = []
    const copy = (label: string, count: number, lane: 'usual' | 'express') => lanes.copy([source('lanes', spans(count))], count, lane).then((outcome) => (order.push(label), outcome))
    await Promise.all([copy('usual 4', 4, 'usual'), copy('usual 3', 3, 'usual'), copy('express 1', 1, 'express')])
    assert.deepEqual(order, ['express 1', 'usual 4', 'usual 3'], 'the express job went into the first COPY, ahead of the usual 3 that arrived before it')

    // A large usual COPY running: an express job arriving now does not wait for it.
    const big = new CopyCombiner(database.db, { maxSpans: 10_000, maxInFlight: 1, maxOpenMs: 60_000 })
    let largeStarted!: () => void
    const started = new Promise<void>((resolve) => (largeStarted = resolve))
    let largeDone = false
    const largeSpans = spans(5_000)
    const large = big.copy([{ projectId: 'lanes', spans: () => (largeStarted(), largeSpans) }], 5_000).then(() => (largeDone = true))
    await started
    let expressSeenWhileLargeRan = false
    const fresh = spans(2)
    await big.copy([{ projectId: 'lanes', spans: () => ((expressSeenWhileLargeRan = !largeDone), fresh) }], 2, 'express')
    await large
    assert.equal(expressSeenWhileLargeRan, true, 'the express COPY started while the usual one was still running')
    assert.equal(await countSpans(database.db, 'lanes'), 8 + 5_002)
  })
})
