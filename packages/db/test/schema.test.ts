import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { declaredColumns } from '../src/database.ts'
import { createProject, createPromptVersion, createPromptset, createTeam, insertApiKey, migrateToLatest, pendingMigrations, assertSchemaIsCurrent, upsertRetentionPolicy, type Db } from '../src/index.ts'
import { engines } from '../src/testing/index.ts'

for (const engine of engines) {
  describe(`schema on ${engine.name}`, () => {
    let db: Db
    let drop: () => Promise<void>
    before(async () => ({ db, drop } = await engine.open()))
    after(() => drop())

    it('is up to date, and migrating again changes nothing', async () => {
      assert.deepEqual(await pendingMigrations(db), [])
      assert.deepEqual(await migrateToLatest(db), [])
      await assertSchemaIsCurrent(db)
    })

    it('matches the declared Database type: tables, columns and nullability', async () => {
      const { rows } = await sql<{ table_name: string; column_name: string; is_nullable: 'YES' | 'NO' }>`
        select table_name, column_name, is_nullable from information_schema.columns
        where table_schema = 'public' and table_name not like 'kysely_%'
          and table_name not in (select relname::text from pg_class where relispartition)`.execute(db)
      const actual: Record<string, Record<string, { nullable: boolean }>> = {}
      for (const row of rows) (actual[row.table_name] ??= {})[row.column_name] = { nullable: row.is_nullable === 'YES' }
      assert.deepEqual(actual, declaredColumns)
    })

    it('refuses a second live prompt in a promptset', async () => {
      const team = await createTeam(db, { name: 't' })
      const project = await createProject(db, { teamId: team.id, name: 'p' })
      const promptset = await createPromptset(db, { projectId: project.id, name: 'r' })
      const base = { promptset_id: promptset.id, value: 'v', model: 'm', variables: '[]', model_settings: '{}', tags: '[]' }
      await db.insertInto('prompts').values({ ...base, version: 1, live: true }).execute()
      await assert.rejects(db.insertInto('prompts').values({ ...base, version: 2, live: true }).execute(), /prompts_one_live_per_promptset/)
      await db.insertInto('prompts').values({ ...base, version: 2, live: false }).execute()
      await assert.rejects(db.insertInto('prompts').values({ ...base, version: 2, live: false }).execute(), /prompts_promptset_id_version_key/)
    })

    it('refuses a duplicate (project, trace, span)', async () => {
      const row = {
        project_id: 'p1', trace_id: 'a'.repeat(32), span_id: 'b'.repeat(16), parent_span_id: null, name: 'n', kind: 1,
        start_time: new Date(), end_time: new Date(), duration_ns: 0, trace_state: null, status_code: 0, status_message: null,
        service_name: null, service_version: null, scope_name: null, scope_version: null, llm_vendor: null, llm_model: null,
        llm_request_type: null, input_tokens: null, output_tokens: null, total_tokens: null,
        attributes: '{}', resource_attributes: '{}', events: '[]', links: '[]',
      }
      await db.insertInto('spans').values(row).execute()
      // The key is enforced in each day's partition (its index is named after the partition).
      await assert.rejects(db.insertInto('spans').values({ ...row, name: 'other' }).execute(), /spans_\w*pkey/)
      await db.insertInto('spans').values({ ...row, project_id: 'p2' }).execute()
    })

    it('cascades a project deletion to its keys, promptsets, prompts, labels and policy', async () => {
      const team = await createTeam(db, { name: 'cascade' })
      const project = await createProject(db, { teamId: team.id, name: 'doomed' })
      await insertApiKey(db, { kind: 'project', teamId: team.id, projectId: project.id, keyHash: 'hash-cascade', prefix: 'tw_proj_x' })
      const promptset = await createPromptset(db, { projectId: project.id, name: 'r' })
      await createPromptVersion(db, { promptsetId: promptset.id, value: 'v', variables: [], model: 'm', modelSettings: {}, tags: [], note: '', spanId: null, live: true })
      await upsertRetentionPolicy(db, { projectId: project.id, enabled: true, retentionDays: 7 })

      await db.deleteFrom('projects').where('id', '=', project.id).execute()

      const remaining = await Promise.all(
        [
          db.selectFrom('api_keys').select('id').where('project_id', '=', project.id),
          db.selectFrom('promptsets').select('id').where('project_id', '=', project.id),
          db.selectFrom('prompts').select('id').where('promptset_id', '=', promptset.id),
          db.selectFrom('prompt_labels').select('name').where('promptset_id', '=', promptset.id),
          db.selectFrom('prompt_label_moves').select('id').where('promptset_id', '=', promptset.id),
          db.selectFrom('project_retention_policies').select('project_id').where('project_id', '=', project.id),
        ].map((query) => query.execute()),
      )
      assert.deepEqual(remaining.map((rows) => rows.length), [0, 0, 0, 0, 0, 0])
    })

    it('keeps a project key tied to a project and a team key to none', async () => {
      const team = await createTeam(db, { name: 'kinds' })
      await assert.rejects(insertApiKey(db, { kind: 'project', teamId: team.id, projectId: null, keyHash: 'h1', prefix: 'x' }), /api_keys_project_kind_check/)
    })
  })
}
