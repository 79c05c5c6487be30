// Counts the fields of an OTLP ExportTraceServiceRequest on the wire, without decoding it, so that
// a protobuf body's parse work is bounded the way MAX_JSON_VALUES bounds a JSON body's: 50 MiB of
// one-byte attributes would otherwise make protobufjs build tens of millions of objects before a
// single span was looked at. The walk only reads tags and lengths, descending into the fields
// that are messages in opentelemetry-proto's trace schema (the others are skipped by length).
// Bytes that are not a valid message end the walk: the decoder then says what is wrong.

type MessageName =
  | 'request'
  | 'resourceSpans'
  | 'resource'
  | 'scopeSpans'
  | 'scope'
  | 'span'
  | 'event'
  | 'link'
  | 'status'
  | 'keyValue'
  | 'anyValue'
  | 'arrayValue'
  | 'keyValueList'

/** For each message, its fields that are messages themselves: field number → message. */
const SUBMESSAGES: Record<MessageName, Partial<Record<number, MessageName>>> = {
  request: { 1: 'resourceSpans' },
  // 1000: the deprecated instrumentation_library_spans, laid out as ScopeSpans.
  resourceSpans: { 1: 'resource', 2: 'scopeSpans', 1000: 'scopeSpans' },
  resource: { 1: 'keyValue' },
  scopeSpans: { 1: 'scope', 2: 'span' },
  scope: { 3: 'keyValue' },
  span: { 9: 'keyValue', 11: 'event', 13: 'link', 15: 'status' },
  event: { 3: 'keyValue' },
  link: { 4: 'keyValue' },
  status: {},
  keyValue: { 2: 'anyValue' },
  anyValue: { 5: 'arrayValue', 6: 'keyValueList' },
  arrayValue: { 1: 'anyValue' },
  keyValueList: { 1: 'keyValue' },
}

/** How far a message's bytes reach, and which message they are. */
interface Frame {
  message: MessageName
  end: number
}

/**
 * The number of fields in `body`, counting the fields of every nested message, or `limit + 1`
 * as soon as it passes `limit`. Stops early (answering the count so far) at bytes that are not a
 * valid message.
 */
export function countProtobufFields(body: Uint8Array, limit: number): number {
  const stack: Frame[] = [{ message: 'request', end: body.length }]
  let position = 0
  let fields = 0

  const varint = (): number => {
    let value = 0
    let shift = 0
    for (;;) {
      if (position >= body.length || shift > 49) return -1
      const byte = body[position++] as number
      value += (byte & 0x7f) * 2 ** shift
      if (byte < 0x80) return value
      shift += 7
    }
  }

  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame
    if (position >= frame.end) {
      if (position > frame.end) return fields
      stack.pop()
      continue
    }
    const tag = varint()
    if (tag < 0) return fields
    if (++fields > limit) return limit + 1
    switch (tag % 8) {
      case 0:
        if (varint() < 0) return fields
        break
      case 1:
        position += 8
        break
      case 5:
        position += 4
        break
      case 2: {
        const length = varint()
        if (length < 0 || position + length > frame.end) return fields
        const submessage = SUBMESSAGES[frame.message][Math.floor(tag / 8)]
        if (submessage === undefined) position += length
        else stack.push({ message: submessage, end: position + length })
        break
      }
      default:
        // Groups (3, 4) are not in proto3, and 6 and 7 are not wire types.
        return fields
    }
  }
  return fields
}
