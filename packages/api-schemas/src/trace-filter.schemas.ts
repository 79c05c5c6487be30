import { Type } from '@sinclair/typebox'
import { TraceListQuerySchema } from './trace-list-query.schemas.ts'

// A filter stored with an evaluator or a monitor is GET /api/traces's own parameters, minus
// paging, order and time (new traces, a run's window, a monitor's window), so that what a person
// filters the list by is what they paste into either.

const { project_id: _project, limit: _limit, cursor: _cursor, from: _from, to: _to, sort: _sort, order: _order, include_tracewell_calls: _own, ...filterProperties } = TraceListQuerySchema.properties
export const TraceFilterBodySchema = Type.Object(filterProperties, { additionalProperties: false, description: 'GET /api/traces’s filter parameters (not limit, cursor, from, to, sort, order)' })
