// A trace's shape (migration 2026-12-06T1620): its models, response models, vendors and services.
// Its 'shape' rows in usage_rollups hold the whole traces of each shape an hour, which the metric
// engine filters and groups by any of model, vendor and service together (trace-shape-cells.ts).

/** The usage_rollups dimension of the traces' shapes. */
export const TRACE_SHAPE_DIMENSION = 'shape'

export interface TraceShape {
  models: readonly string[]
  response_models: readonly string[]
  vendors: readonly string[]
  services: readonly string[]
}

/** A shape's value in its rows: what tracewell_trace_shape gives of the same summary's columns. */
export const traceShapeKey = (trace: TraceShape): string => JSON.stringify([trace.models, trace.response_models, trace.vendors, trace.services])
