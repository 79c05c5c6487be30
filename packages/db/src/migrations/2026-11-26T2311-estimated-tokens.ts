import { sql, type Kysely } from 'kysely'

// Token counts that are estimates, not the provider's (issue 30, item 8): a span says so, or it
// is a streamed call of an instrumentation known to count streams itself (the Langtrace SDKs,
// OpenLLMetry for JavaScript). The span keeps the mark in `tokens_estimated`; a trace's summary
// is marked when any of its spans is. The writer sets both from now on.
//
// Spans stored before are marked here by the same rules, read from their attributes as stored
// (OTLP AnyValue objects, or plain values in rows written before that form); then the summaries
// of their traces. Frozen in time: the rules are written out, not imported from @tracewell/llm-usage.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table spans add column tokens_estimated boolean not null default false`.execute(db)
  await sql`alter table trace_summaries add column tokens_estimated boolean not null default false`.execute(db)
  const isTrue = (key: string) => sql`(attributes -> ${key} ->> 'boolValue' = 'true' or attributes -> ${key} ->> 'stringValue' = 'true' or attributes ->> ${key} = 'true')`
  await sql`
    update spans set tokens_estimated = true
    where (input_tokens is not null or output_tokens is not null or total_tokens is not null)
      and (${isTrue('gen_ai.usage.estimated')} or ${isTrue('llm.usage.estimated')}
        or ((${isTrue('gen_ai.request.stream')} or ${isTrue('llm.is_streaming')})
          and (attributes ? 'langtrace.sdk.name' or scope_name like '@traceloop/instrumentation-%')))`.execute(db)
  await sql`
    update trace_summaries t set tokens_estimated = true
    where exists (select 1 from spans s where s.project_id = t.project_id and s.trace_id = t.trace_id and s.tokens_estimated)`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table trace_summaries drop column tokens_estimated`.execute(db)
  await sql`alter table spans drop column tokens_estimated`.execute(db)
}
