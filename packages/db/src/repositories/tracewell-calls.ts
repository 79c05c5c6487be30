import { sql } from 'kysely'

// Traces Tracewell makes itself (the playground, experiments, judges) carry this service.name
// (selfServiceName of @tracewell/llm-calls, equal by a test). The trace list, sessions and usage
// leave them out unless asked (include_tracewell_calls), and the evaluators' scheduler never
// judges them: a judge must not judge its own calls.

export const TRACEWELL_SERVICE = 'tracewell'

/**
 * On `trace_summaries t`: not one of Tracewell's own traces. A check on the row itself (its root's
 * service), so it rides whichever index the rest of the statement uses, statistics or not.
 */
export const notTracewellTrace = sql<boolean>`t.service_name is distinct from ${TRACEWELL_SERVICE}`
