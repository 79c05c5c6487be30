/**
 * The longest string attribute value stored, in UTF-16 code units (about 1 MiB of ASCII text).
 *
 * A longer value is cut to this length and ends with a marker naming its original length, rather
 * than failing the request with 413: exporters treat 413 as final and drop the whole batch, every
 * other span of the trace with it, while a cut prompt or completion keeps the span, its timing
 * and the start of the text. OpenTelemetry SDKs (AttributeValueLengthLimit) and trace stores
 * such as Tempo (max_attribute_bytes) make the same choice. Request-body limits still bound what
 * one request may carry; this bounds what one value costs every later read of its span.
 */
export const MAX_STRING_VALUE_LENGTH = 1024 * 1024

/** The marker that ends a cut value; the original length follows it. */
export const TRUNCATION_MARKER = '…[truncated by Tracewell; original length '

/**
 * `value` as stored: itself, or cut to `limit` (ATTRIBUTE_VALUE_LENGTH_LIMIT, by default
 * MAX_STRING_VALUE_LENGTH) with the truncation marker.
 */
export function storableString(value: string, limit: number = MAX_STRING_VALUE_LENGTH): string {
  if (value.length <= limit) return value
  const marker = `${TRUNCATION_MARKER}${value.length}]`
  return value.slice(0, Math.max(0, limit - marker.length)) + marker
}
