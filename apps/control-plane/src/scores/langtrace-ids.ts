import { BadRequestError } from '@tracewell/http'

// The Langtrace SDKs send span and trace ids to /api/evaluation in two forms: the TypeScript SDK
// as OpenTelemetry writes them (16 and 32 hex characters), the Python SDK's root-span helper as
// the decimal integers Python's OpenTelemetry holds (str(span_context.span_id), or the int itself
// from its async helper). Stored ids are hex; an id reads as decimal when it cannot be hex.
// An id that is both (16 or 32 decimal digits) is ambiguous: both readings are returned, hex first.

export type IdForm = 'hex' | 'decimal'

export interface IdReading {
  hex: string
  form: IdForm
}

function readings(raw: string, hexLength: number, bits: bigint, where: string): IdReading[] {
  const found: IdReading[] = []
  if (raw.length === hexLength && /^[0-9a-fA-F]+$/.test(raw)) found.push({ hex: raw.toLowerCase(), form: 'hex' })
  if (/^\d{1,40}$/.test(raw)) {
    const value = BigInt(raw)
    if (value > 0n && value < 1n << bits) found.push({ hex: value.toString(16).padStart(hexLength, '0'), form: 'decimal' })
  }
  const nonZero = found.filter((reading) => !/^0+$/.test(reading.hex))
  if (nonZero.length === 0) {
    throw new BadRequestError(`${where}: expected ${hexLength} hex characters or a decimal integer from 1 to 2^${bits} − 1, got ${JSON.stringify(raw)}`)
  }
  return nonZero
}

export const spanIdReadings = (raw: string, where: string): IdReading[] => readings(raw, 16, 64n, where)
export const traceIdReadings = (raw: string, where: string): IdReading[] => readings(raw, 32, 128n, where)

/** The id as the caller's SDK writes it: hex, or the decimal integer. */
export const idInForm = (hex: string, form: IdForm): string => (form === 'hex' ? hex : BigInt(`0x${hex}`).toString(10))
