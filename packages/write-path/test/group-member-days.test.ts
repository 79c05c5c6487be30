import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createErasure, deleteSummariesOfWindow, findErasure, metricSeries, sql, type Db, type ErasureDto, type MetricGroup, type SpanInsert } from '@tracewell/db'
import { engines } from '@tracewell/db/testing'
import { DEFAULT_FOLD_LIMITS, eraseBatch, storeSpans, summariseAll, summaryMismatches } from '../src/index.ts'
import { groupMemberMismatches } from '../src/group-member-check.ts'

// Users and sessions by model, vendor, service, prompt and tag from a row a settled day and value
// (group_member_days, migration 2026-12-07T0100): the same series as the summaries give, through
// late spans, the erasure of a user and retention, each of which leaves its day to the summaries
// until the day is built anew; the fold's settle builds the days the boundary passed.

const ms = 1_000_000n
const day0 = Date.parse('2026-03-01T00:00:00Z')
const hourMs = 3_600_000
const dayMs = 86_400_000
const MODELS = ['gpt-4o', 'claude-3-5-sonnet', 'gpt-4o-mini', null]
const PROJECT = 'groups'

// 400 one-span traces 10 minutes apart (nearly three days): some without a model, user, session, prompt or tag.
function span(i: number): SpanInsert {
  const start = BigInt(day0 + i * 10 * 60_000) * ms
  const duration = BigInt(100 + ((i * 31) % 500)) * ms
  const model = MODELS[(i * 7) % MODELS.length]!
  const attributes: SpanInsert['attributes'] = {}
  if (i % 3 !== 0) Object.assign(attributes, { 'tracewell.prompt.promptset_id': { stringValue: `ps-${i % 4}` }, 'tracewell.prompt.version': { intValue: String(1 + (i % 2)) } })
  if (i % 5 !== 0) attributes['tag.tags'] = { stringValue: JSON.stringify([`t-${i % 3}`, ...(i % 7 === 0 ? ['rare'] : [])]) }
  return {
    projectId: PROJECT, traceId: i.toString(16).padStart(32, '0'), spanId: '1'.padStart(16, '0'), parentSpanId: null,
    name: 'op', kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(start + duration), durationNs: String(duration), traceState: null,
    statusCode: 0, statusMessage: null, serviceName: i % 41 === 0 ? 'tracewell' : ['api', 'worker', null][i % 3]!, serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: model === null ? null : model.startsWith('gpt') ? 'openai' : 'anthropic', llmModel: model, llmRequestType: model === null ? null : 'chat',
    inputTokens: 10, outputTokens: 5, totalTokens: null, totalCostUsd: 0.01,
    sessionId: i % 11 === 0 ? null : `s-${Math.floor(i / 5)}`, userId: i % 13 === 0 ? null : `u-${(i * i) % 29}`,
    resourceAttributes: {}, events: [], links: [], attributes,
  }
}

const GROUPS: MetricGroup[] = ['model', 'vendor', 'service', 'prompt', 'tag', 'user', 'session']
const WINDOWS: Array<[number, number]> = [[day0, day0 + 3 * dayMs], [day0 + 6 * hourMs, day0 + 2 * dayMs + 12 * hourMs]]

for (const engine of engines) {
  describe(`users and sessions by group from their rows of the day on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => {
      ;({ db, drop } = await engine.open())
      await sql`insert into teams (id, name) values ('t', 't')`.execute(db)
      await sql`insert into projects (id, team_id, name) values (${PROJECT}, 't', ${PROJECT})`.execute(db)
      await storeSpans(db, Array.from({ length: 400 }, (_, i) => span(i)))
      await summariseAll(db)
    })
    after(() => drop())

    /** Every series of users and sessions by each group, in points of 1, 3, 6 and 24 hours, over each window. */
    const answers = async () => {
      const all: unknown[] = []
      for (const [from, to] of WINDOWS) {
        for (const groupBy of GROUPS) {
          for (const metric of ['users', 'sessions'] as const) {
            for (const hours of [1, 3, 6, 24]) {
              all.push([metric, groupBy, hours, from, (await metricSeries(db, { projectId: PROJECT, metric, groupBy, from: new Date(from), to: new Date(to), granularitySeconds: hours * 3600 })).series])
            }
          }
        }
      }
      return all
    }
    const builtDays = async () => (await sql<{ day: Date }>`
      select day from group_member_day_marks where project_id = ${PROJECT} and built and day < ${new Date(day0 + 4 * dayMs)} order by day`.execute(db)).rows.map((r) => r.day.getTime())
    /** The answers with no day built: the summaries'. */
    const fromSummaries = async () => {
      await sql`update group_member_day_marks set built = false where project_id = ${PROJECT}`.execute(db)
      assert.deepEqual(await builtDays(), [])
      return answers()
    }
    const rebuild = () => sql`select tracewell_rebuild_group_member_days()`.execute(db)
    const clean = { traces: 0, sessions: 0, rollups: 0, blocks: 0 }

    /** After a change: the answers as they are, and once every day is built anew, equal the summaries'. */
    const answersHoldThrough = async (unbuilt: number[]) => {
      const built = await builtDays()
      for (const day of unbuilt) assert.ok(!built.includes(day), `${new Date(day).toISOString()} is left to the summaries`)
      const mixed = await answers()
      await rebuild()
      const rebuilt = await answers()
      const expected = await fromSummaries()
      await rebuild()
      assert.deepEqual(mixed, expected)
      assert.deepEqual(rebuilt, expected)
      // (Retention cut a day short: the other rollups' users of the day disagree with their hours until it passes the day's end.)
      assert.equal(await groupMemberMismatches(db, PROJECT), 0)
    }

    it('counts users and sessions by each group as the summaries count them', async () => {
      // Stored after the boundary passed their days, the traces left them unbuilt.
      assert.deepEqual(await builtDays(), [])
      const expected = await answers()
      await rebuild()
      assert.deepEqual(await builtDays(), [day0, day0 + dayMs, day0 + 2 * dayMs])
      assert.deepEqual(await answers(), expected)
      assert.deepEqual(await summaryMismatches(db, PROJECT), clean)
      const models = (await metricSeries(db, { projectId: PROJECT, metric: 'users', groupBy: 'model', from: new Date(day0), to: new Date(day0 + dayMs), granularitySeconds: 6 * 3600 })).series
      assert.deepEqual(models.map((s) => s.group).sort(), ['claude-3-5-sonnet', 'gpt-4o', 'gpt-4o-mini', null].sort())
    })

    it('reads the rows, which the check compares with the summaries', async () => {
      const users = async () => (await metricSeries(db, { projectId: PROJECT, metric: 'users', groupBy: 'model', from: new Date(day0), to: new Date(day0 + dayMs), granularitySeconds: 86_400 }))
        .series.find((s) => s.group === 'gpt-4o')?.points[0]?.value
      const before = await users()
      const tamper = (change: string) => sql`
        update group_member_days set ${sql.raw(change)} where project_id = ${PROJECT} and dimension = 'model' and value = 'gpt-4o' and day = ${new Date(day0)}`.execute(db)
      // One more user, active in every hour of the day.
      await tamper('user_masks = user_masks || 16777215, user_counts = user_counts || 1')
      assert.equal(await users(), (before ?? 0) + 1)
      assert.equal((await summaryMismatches(db, PROJECT)).rollups, 1)
      await tamper('user_masks = user_masks[1:cardinality(user_masks) - 1], user_counts = user_counts[1:cardinality(user_counts) - 1]')
      assert.deepEqual(await summaryMismatches(db, PROJECT), clean)
    })

    it('leaves a day a late span changes to the summaries until it is built anew', async () => {
      // Trace 100 (day 0, 16:40) gets a span of another model, user and session, two hours earlier.
      const late = span(100)
      await storeSpans(db, [{
        ...late, spanId: '2'.padStart(16, '0'), parentSpanId: late.spanId, llmModel: 'o3', llmVendor: 'openai',
        startTimeUnixNano: String(BigInt(late.startTimeUnixNano) - 2n * BigInt(hourMs) * ms),
      }])
      await summariseAll(db)
      await answersHoldThrough([day0])
      // A span that changes no group nor member leaves its day built.
      await storeSpans(db, [{ ...late, spanId: '3'.padStart(16, '0'), parentSpanId: late.spanId }])
      await summariseAll(db)
      assert.deepEqual(await builtDays(), [day0, day0 + dayMs, day0 + 2 * dayMs])
    })

    it("leaves the days of an erased user's traces to the summaries until they are built anew", async () => {
      let erasure: ErasureDto = await createErasure(db, PROJECT, { userId: 'u-4' }, null)
      for (let round = 0; erasure.status !== 'completed'; round++) {
        assert.ok(round < 100, 'the erasure completes')
        assert.notEqual(await eraseBatch(db, erasure, { maxTraces: 50, foldLimits: DEFAULT_FOLD_LIMITS, recheckAfterMs: 0 }), 'busy')
        erasure = (await findErasure(db, PROJECT, erasure.id))!
      }
      await answersHoldThrough([day0, day0 + dayMs, day0 + 2 * dayMs])
    })

    it('drops the days retention passed and builds anew the day it cut', async () => {
      const cut = day0 + dayMs + 6 * hourMs
      await sql`delete from spans where project_id = ${PROJECT} and start_time < ${new Date(cut)}`.execute(db)
      await deleteSummariesOfWindow(db, PROJECT, { from: null, to: new Date(cut) })
      assert.equal((await sql<{ n: number }>`select count(*)::int as n from group_member_days where project_id = ${PROJECT} and day = ${new Date(day0)}`.execute(db)).rows[0]!.n, 0)
      await answersHoldThrough([day0 + dayMs])
      assert.deepEqual(await builtDays(), [day0 + dayMs, day0 + 2 * dayMs])
    })

    it("builds the days the boundary passed when the fold settles, and none of today's", async () => {
      const { rows: [settled] } = await sql<{ at: Date }>`select settled_until as at from group_member_days_settled`.execute(db)
      const boundary = settled!.at.getTime()
      assert.equal(boundary, Math.floor(Date.now() / dayMs) * dayMs - dayMs)
      // As if the fold had not run since day 2 began: its day and the later ones are built by the next fold.
      await sql`update group_member_days_settled set settled_until = ${new Date(day0 + 2 * dayMs)}`.execute(db)
      await sql`delete from group_member_day_marks where project_id = ${PROJECT} and day >= ${new Date(day0 + 2 * dayMs)}`.execute(db)
      await sql`delete from group_member_days where project_id = ${PROJECT} and day >= ${new Date(day0 + 2 * dayMs)}`.execute(db)
      const now = BigInt(Date.now()) * ms
      await storeSpans(db, [{ ...span(0), traceId: 'f'.repeat(32), startTimeUnixNano: String(now), endTimeUnixNano: String(now + ms) }])
      await summariseAll(db)
      assert.equal((await sql<{ at: Date }>`select settled_until as at from group_member_days_settled`.execute(db)).rows[0]!.at.getTime(), boundary)
      assert.deepEqual(await builtDays(), [day0 + dayMs, day0 + 2 * dayMs, day0 + 3 * dayMs])
      const { rows: [today] } = await sql<{ n: number }>`select count(*)::int as n from group_member_day_marks where project_id = ${PROJECT} and day >= ${new Date(boundary)}`.execute(db)
      assert.equal(today!.n, 0)
      assert.equal(await groupMemberMismatches(db, PROJECT), 0)
    })
  })
}
