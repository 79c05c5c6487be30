import type { TraceFilterParams } from '@tracewell/db'
import { BadRequestError } from '@tracewell/http'

/**
 * What the schema cannot say of a filter: attr entries are key=value, the score bounds need
 * score_name. `at` is where the filter is in the request (a dashboard's widgets have one each).
 */
export function checkTraceFilter(filter: TraceFilterParams, at = 'body/filter'): void {
  for (const [index, pair] of (filter.attr ?? []).entries()) {
    if (pair.indexOf('=') <= 0) throw new BadRequestError(`${at}/attr/${index}: expected key=value, got ${JSON.stringify(pair)}`)
  }
  if (filter.score_name === undefined) {
    for (const name of ['min_score', 'max_score', 'score_value'] as const) if (filter[name] !== undefined) throw new BadRequestError(`${at}/${name}: needs score_name`)
  }
}
