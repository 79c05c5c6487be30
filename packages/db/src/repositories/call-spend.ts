import { sql, type RawBuilder } from 'kysely'

// What the model calls of a judgment or an experiment result used, added attempt by attempt: a
// failed attempt's calls cost as much as a successful one's (issue 48 §6).

/** Tokens as the API reported them; cost null where no price is known. */
export interface CallSpend {
  inputTokens: number | null
  outputTokens: number | null
  costUsd: number | null
}

/** `input_tokens = …, output_tokens = …, cost_usd = …`, each adding what is known to what was (null until a call reports some). */
export function spendAssignments(spend: CallSpend): RawBuilder<unknown> {
  const add = (column: string, value: number | null) => (value === null ? sql`${sql.ref(column)} = ${sql.ref(column)}` : sql`${sql.ref(column)} = coalesce(${sql.ref(column)}, 0) + ${value}`)
  return sql.join([add('input_tokens', spend.inputTokens), add('output_tokens', spend.outputTokens), add('cost_usd', spend.costUsd)])
}
