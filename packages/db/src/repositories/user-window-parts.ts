import { sql, type RawBuilder } from 'kysely'
import { DAY_MS, HOUR_MS } from './metric-buckets.ts'

// A user's figures over a whole window (by which dashboards rank users, issue 45 §3), read from as
// few rows as the window allows: a row a user and UTC week (user_week_figures, migration
// 2026-12-06T1610), day ('user.day') or hour ('user'), each a sum of the finer ones. A window's
// whole weeks are a row a user each; a partial week or day at an edge is either its finer parts
// inside the window, or its whole row less its finer parts outside, whichever reads fewer periods
// holding rows: a window ending now takes its last week's row less the hours and days still to
// come, which hold no row yet. Figures subtract (their rows are read with sign -1), histograms too.

const WEEK_MS = 7 * DAY_MS
/** 1970-01-01, the epoch, was a Thursday: Mondays are 4 days past a multiple of 7 days from it. */
const MONDAY_MS = 4 * DAY_MS

export type PartLevel = 'week' | 'day' | 'hour'

/** The rows of one level over [from, to) (whole periods of it), added (sign 1) or taken back (-1). */
export interface WindowPart {
  level: PartLevel
  from: number
  to: number
  sign: 1 | -1
}

const SIZE: Record<PartLevel, number> = { week: WEEK_MS, day: DAY_MS, hour: HOUR_MS }
const ORIGIN: Record<PartLevel, number> = { week: MONDAY_MS, day: 0, hour: 0 }
const FINER: Record<PartLevel, PartLevel | null> = { week: 'day', day: 'hour', hour: null }

const floorTo = (ms: number, level: PartLevel) => Math.floor((ms - ORIGIN[level]) / SIZE[level]) * SIZE[level] + ORIGIN[level]
const ceilTo = (ms: number, level: PartLevel) => Math.ceil((ms - ORIGIN[level]) / SIZE[level]) * SIZE[level] + ORIGIN[level]

interface Plan {
  parts: WindowPart[]
  /** The periods read that began before now: those that may hold rows. */
  cost: number
}

/**
 * The signed parts whose rows sum to the rows of the hours [from, to) (whole hours), the fewest
 * periods begun before `now` read.
 */
export function windowParts(from: number, to: number, now: number): WindowPart[] {
  const parts: WindowPart[] = []
  // Adjacent parts of one level and sign read as one range.
  for (const part of plan(from, to, 'week', now).parts) {
    const last = parts.at(-1)
    if (last !== undefined && last.level === part.level && last.sign === part.sign && last.to === part.from) last.to = part.to
    else parts.push({ ...part })
  }
  return parts
}

function plan(from: number, to: number, level: PartLevel, now: number): Plan {
  if (from >= to) return { parts: [], cost: 0 }
  const finer = FINER[level]
  const whole = (a: number, b: number): Plan => ({
    parts: [{ level, from: a, to: b, sign: 1 }],
    cost: a < now ? Math.ceil((Math.min(b, now) - a) / SIZE[level]) : 0,
  })
  if (finer === null) return whole(from, to)
  // An edge's partial period: its finer parts, or the period less the finer parts outside.
  const edge = (a: number, b: number): Plan => {
    const inside = plan(a, b, finer, now)
    const start = floorTo(a, level)
    const end = ceilTo(b, level)
    if (end - start !== SIZE[level]) return inside
    const outside = join(whole(start, end), negate(plan(start, a, finer, now)), negate(plan(b, end, finer, now)))
    return outside.cost < inside.cost ? outside : inside
  }
  const first = ceilTo(from, level)
  const last = floorTo(to, level)
  if (first >= last) return first === last ? join(edge(from, first), edge(last, to)) : edge(from, to)
  return join(edge(from, first), whole(first, last), edge(last, to))
}

const join = (...plans: Plan[]): Plan => ({ parts: plans.flatMap((p) => p.parts), cost: plans.reduce((sum, p) => sum + p.cost, 0) })

const negate = (p: Plan): Plan => ({ parts: p.parts.map((part) => ({ ...part, sign: part.sign === 1 ? -1 : 1 })), cost: p.cost })

/**
 * The users' rows of the weeks [from, to) (whole weeks), in the columns `columns` selects of
 * (hour, value and the figures, as usage_rollups names them; `hour` the week's Monday), meeting `condition`.
 */
export function userWeekRows(projectId: string, [from, to]: [Date, Date], columns: RawBuilder<unknown>, condition: RawBuilder<unknown>): RawBuilder<unknown> {
  // Looked up week by week through the primary key, whatever the statistics believe (autovacuum may be off).
  return sql`
    select ${columns} from generate_series(${from}::timestamptz, ${to}::timestamptz, interval '7 days') as w(at)
    cross join lateral (
      select week as hour, user_id as value, traces, error_traces, spans, errors, input_tokens, output_tokens, cost_usd, durations
      from user_week_figures where project_id = ${projectId} and week = w.at offset 0
    ) as r
    where w.at < ${to}${condition}`
}
