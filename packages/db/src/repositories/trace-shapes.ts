// A trace's shape (migration 2026-12-06T1620): its models, response models, vendors and services.
// Its 'shape' rows in usage_rollups hold the whole traces of each shape an hour, which the metric
// engine filters and groups by any of model, vendor and service together (trace-shape-cells.ts).

/** The usage_rollups dimension of the traces' shapes. */
export const TRACE_SHAPE_DIMENSION = 'shape'

/**
 * The widest shape given a row, in bytes of UTF-8. The value is part of usage_rollups' key, whose
 * btree entries hold at most 2,704 bytes: a trace of several distinct long models or services
 * (each cut to 600 bytes at decode) made every later fold fail, for every project. A wider shape
 * gets no row, and the widgets that read shapes leave its trace out (docs/api.md); the same bound
 * is in tracewell_trace_shape (migration 2026-12-06T2140).
 */
export const MAX_TRACE_SHAPE_BYTES = 2000

export interface TraceShape {
  models: readonly string[]
  response_models: readonly string[]
  vendors: readonly string[]
  services: readonly string[]
}

/** A shape's value in its rows (what tracewell_trace_shape gives of the same summary's columns), or null when too wide for a row. */
export const traceShapeKey = (trace: TraceShape): string | null => {
  const key = JSON.stringify([trace.models, trace.response_models, trace.vendors, trace.services])
  // A UTF-16 code unit is at most three bytes: most keys need no count.
  return key.length * 3 <= MAX_TRACE_SHAPE_BYTES || Buffer.byteLength(key) <= MAX_TRACE_SHAPE_BYTES ? key : null
}
