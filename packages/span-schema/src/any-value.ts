// OTLP attribute values in the normalised JSON form every body format is decoded into.

/** OTLP AnyValue in its JSON form, normalised: exactly one key is present. */
export type AnyValue =
  | { stringValue: string }
  | { intValue: string } // int64 as a decimal string, so it survives JSON without rounding
  | { doubleValue: number | 'NaN' | 'Infinity' | '-Infinity' }
  | { boolValue: boolean }
  | { bytesValue: string } // base64
  | { arrayValue: { values: AnyValue[] } }
  | { kvlistValue: { values: Array<{ key: string; value: AnyValue }> } }
  | Record<string, never> // an empty AnyValue (OTLP allows it)

/** Attributes in the map form: attribute name → AnyValue. */
export type AttributeMap = Record<string, AnyValue>
