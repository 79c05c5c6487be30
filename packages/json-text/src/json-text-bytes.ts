import { parseJsonText } from './parse-json-text.ts'

/**
 * A JSON value kept as the UTF-8 bytes of its text, for a reader that mostly passes it on: the
 * writer stores a span's attributes and events as ingest queued them, so they are neither parsed
 * into objects nor written out again as text (docs/architecture.md#decode-once). Whoever needs
 * the value asks for it (`value()`), and JSON.stringify writes the value (toJSON).
 */
export class JsonTextBytes {
  /** A view of the bytes, often into a larger buffer (the queued body), not a copy. */
  readonly bytes: Buffer

  /** `bytes` must hold one well-formed JSON text (it is not checked here: the queue's codec wrote it). */
  constructor(bytes: Buffer) {
    this.bytes = bytes
  }

  /** The JSON text. */
  text(): string {
    return this.bytes.toString('utf8')
  }

  /** The value, parsed anew on each call. */
  value(): unknown {
    return parseJsonText(this.text())
  }

  toJSON(): unknown {
    return this.value()
  }
}
