import { sql, type Kysely } from 'kysely'

// Spans that sum the calls made beneath them (operation `invoke_agent`: the Vercel AI SDK's
// ai.generateText and ai.streamText, agent runs) no longer count towards a trace's tokens and cost:
// their children already do, and each call counted twice. Recounts the summaries of the traces
// that hold such a span with tokens or a cost, from their spans. One statement: only traces with
// such spans change (one pass over spans finds them). Frozen in time: the operation name is
// written here, not imported.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    update trace_summaries t
    set input_tokens = s.input_tokens, output_tokens = s.output_tokens, total_tokens = s.total_tokens, cost_usd = s.cost_usd
    from (
      select project_id, trace_id,
        coalesce(sum(input_tokens) filter (where llm_request_type is distinct from 'invoke_agent'), 0) as input_tokens,
        coalesce(sum(output_tokens) filter (where llm_request_type is distinct from 'invoke_agent'), 0) as output_tokens,
        coalesce(sum(coalesce(total_tokens, coalesce(input_tokens, 0) + coalesce(output_tokens, 0))) filter (where llm_request_type is distinct from 'invoke_agent'), 0) as total_tokens,
        sum(total_cost_usd) filter (where llm_request_type is distinct from 'invoke_agent') as cost_usd
      from spans
      where (project_id, trace_id) in (
        select project_id, trace_id from spans
        where llm_request_type = 'invoke_agent' and (input_tokens is not null or output_tokens is not null or total_tokens is not null or total_cost_usd is not null)
      )
      group by project_id, trace_id
    ) s
    where t.project_id = s.project_id and t.trace_id = s.trace_id`.execute(db)
}

// Nothing to undo: the counts before were wrong, and the previous code adds to them either way.
export async function down(): Promise<void> {}
