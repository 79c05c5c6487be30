import { parseJsonText } from './parse-json-text.ts'

/**
 * A JSON value kept as the UTF-8 bytes of its text, for a reader that mostly passes it on: the
 * writer stores a span's attributes and events as ingest queued them, so they are neither parsed
 * into objects nor written out again as text (docs/architecture.md#decode-once). Whoever needs
 * the value asks for it (`value()`), and JSON.stringify writes the value (toJSON).
 */
export class JsonTextBytes {
  readonly bytes: Uint8Array

  /** `bytes` must hold one well-formed JSON text (it is not checked here: the queue's codec wrote it). */
  constructor(bytes: Uint8Array) {
    this.bytes = bytes
  }

  /** The JSON text. */
  text(): string {
    return this.#buffer().toString('utf8')
  }

  /** The value, parsed anew on each call. */
  value(): unknown {
    return parseJsonText(this.text())
  }

  toJSON(): unknown {
    return this.value()
  }

  /**
   * Whether the text holds `"<key>"`: false means no object in it has that key, so a reader
   * looking for a few keys parses only the texts that may hold them. Exact for keys written
   * without escapes, which is how JSON.stringify writes every key without quotes, backslashes or
   * control characters.
   */
  mayHaveKey(key: string): boolean {
    return this.#buffer().includes(`"${key}"`)
  }

  /** The bytes as a Buffer, without copying them. */
  #buffer(): Buffer {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength)
  }
}
