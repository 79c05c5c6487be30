import { Type } from '@sinclair/typebox'
import type { TraceFilterParams } from '@tracewell/db'
import { BadRequestError } from '@tracewell/http'
import { TraceListQuerySchema } from './trace-queries.routes.ts'

// A filter stored with an evaluator or a monitor is GET /api/traces's own parameters, minus
// paging, order and time (new traces, a run's window, a monitor's window), so that what a person
// filters the list by is what they paste into either.

const { project_id: _project, limit: _limit, cursor: _cursor, from: _from, to: _to, sort: _sort, order: _order, include_tracewell_calls: _own, ...filterProperties } = TraceListQuerySchema.properties
export const TraceFilterBodySchema = Type.Object(filterProperties, { additionalProperties: false, description: 'GET /api/traces’s filter parameters (not limit, cursor, from, to, sort, order)' })

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
