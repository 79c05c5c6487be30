import { JanitorConfigSchema, loadConfig, type JanitorConfig } from '@tracewell/config'
import { createProject, createTeam, listDayPartitions, sql, upsertRetentionPolicy, type Db } from '@tracewell/db'

export const dayMs = 24 * 60 * 60 * 1000

export function janitorConfig(url: string, overrides: Record<string, string> = {}): JanitorConfig {
  return loadConfig(JanitorConfigSchema, { DATABASE_URL: url, LOG_LEVEL: 'silent', ...overrides })
}

/** A project with, unless `policy` is null, a stored retention policy. */
export async function project(db: Db, name: string, policy: { enabled: boolean; retentionDays: number } | null): Promise<string> {
  const team = await createTeam(db, { name: `team-${name}` })
  const created = await createProject(db, { teamId: team.id, name })
  if (policy) await upsertRetentionPolicy(db, { projectId: created.id, ...policy })
  return created.id
}

/**
 * `count` spans of a project starting at `startTime` (each one microsecond later than the one
 * before, unless `sameStart`), written in one statement: tests need thousands of rows fast.
 */
export async function seedSpans(db: Db, projectId: string, count: number, startTime: Date, tag = 's', sameStart = false): Promise<void> {
  const step = sameStart ? 0 : 1
  await sql`
    insert into spans (project_id, trace_id, span_id, name, kind, start_time, end_time, duration_ns, attributes, resource_attributes, events, links)
    select ${projectId}, md5(${tag} || i::text), lpad(to_hex(i), 16, '0'), 'span', 1,
           ${startTime}::timestamptz + (i * ${step}) * interval '1 microsecond',
           ${startTime}::timestamptz + (i * ${step}) * interval '1 microsecond' + interval '1 second',
           1000000000, '{}'::jsonb, '{}'::jsonb, '[]'::jsonb, '[]'::jsonb
    from generate_series(1, ${count}::int) as i`.execute(db)
}

/** Makes every DELETE statement on spans (on each of its partitions, where the janitor deletes) take at least `seconds`, so a run is reliably still going. */
export async function slowDownDeletes(db: Db, seconds: number): Promise<void> {
  await sql.raw(`create or replace function test_slow_delete() returns trigger language plpgsql as $$
    begin perform pg_sleep(${seconds}); return null; end $$`).execute(db)
  for (const { name } of await listDayPartitions(db, 'spans')) {
    await sql`create trigger test_slow_delete before delete on ${sql.id(name)} for each statement execute function test_slow_delete()`.execute(db)
  }
}

export async function removeSlowDeletes(db: Db): Promise<void> {
  for (const { name } of await listDayPartitions(db, 'spans')) await sql`drop trigger if exists test_slow_delete on ${sql.id(name)}`.execute(db)
}
