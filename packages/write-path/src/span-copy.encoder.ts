// A span batch in PostgreSQL's binary COPY format (copy-chunks.ts), for storeSpans: no database
// access.
//
// Every row must read back exactly as the statement path (span-statement.ts) stores it. Where a
// value is one that path would treat in a way this encoder does not reproduce (a wrong type at
// run time, a number with a fraction, a time in year 10000 or later), encoding gives up and
// storeSpans uses that path.

import { spanColumnList, type SpanColumn, type SpanFields } from '@tracewell/db'
import { CopyChunks, NotEncodable } from './copy-chunks.ts'
import type { ProjectSpanSource } from './span-statement.ts'

/** The statement the encoded rows are read by; columns in spanColumnList order, as the rows are written. */
export const spanCopyStatement = `copy spans (${spanColumnList.map((column) => column.name).join(', ')}) from stdin with (format binary)`

/** What SpanCopyEncoder tells of each span: the span, then the bytes of the JSON text users search in it. */
export interface SpanEncoded {
  span(projectId: string, span: SpanFields): void
  /**
   * The UTF-8 bytes of the span's attributes as JSON, then of its events' (`bytes[start]` to
   * `bytes[end - 1]`), each to be read now, not kept; called unbound.
   */
  searchableText(bytes: Uint8Array, start: number, end: number): void
  /** Called once a source's spans are all encoded. */
  sourceEnd(): void
}

/**
 * Encodes span sources into binary COPY data one source at a time, so that a COPY can send the
 * chunks one source filled while the next is encoded (copySpans streams them). Text and
 * JSON are made storable as spanRowsJson makes them (U+0000 and lone surrogates → U+FFFD).
 * Each source's spans are asked for once and encoded before the next source's, so only one
 * source's records need to be alive at a time.
 */
export class SpanCopyEncoder {
  readonly #copy = new CopyChunks(spanColumnList.length)
  readonly #onSpan: SpanEncoded | undefined
  /** How many of the chunks were handed out by takeFilled. */
  #taken = 0

  constructor(onSpan?: SpanEncoded) {
    this.#onSpan = onSpan
  }

  /**
   * Encodes the source's spans; false when one holds a value only the statement path stores
   * exactly (see the top of this file), after which this encoder's data is unusable.
   */
  add(source: ProjectSpanSource): boolean {
    try {
      encodeSource(this.#copy, source, this.#onSpan)
      return true
    } catch (error) {
      if (error instanceof NotEncodable) return false
      throw error
    }
  }

  /** The chunks filled since the last call: the data so far, but for the chunk still being filled. */
  takeFilled(): Buffer[] {
    const filled = this.#copy.chunks.slice(this.#taken)
    this.#taken = this.#copy.chunks.length
    return filled
  }

  /** The rest of the data (the chunk being filled and the trailer); nothing may be added after it. */
  finish(): Buffer[] {
    this.#copy.finish()
    return this.takeFilled()
  }

  /** Every chunk made, for releaseCopyChunks once the COPY has been committed. */
  get chunks(): readonly Buffer[] {
    return this.#copy.chunks
  }
}

/** Appends a row for each of the source's spans, its columns as spanColumns describes them; throws NotEncodable. */
function encodeSource(copy: CopyChunks, source: ProjectSpanSource, onSpan: SpanEncoded | undefined): void {
  const searchable = onSpan?.searchableText
  for (const span of source.spans()) {
    onSpan?.span(source.projectId, span)
    copy.row()
    copy.text(source.projectId)
    // The rest in spanColumnList order, project_id (the source's) first.
    for (let i = 1; i < spanColumnList.length; i++) {
      const column = spanColumnList[i] as SpanColumn
      const value = span[column.field as keyof SpanFields]
      switch (column.kind) {
        case 'text': copy.text(value); break
        case 'int16': copy.int16(value); break
        case 'int64': copy.int64(value); break
        case 'int64Decimal': copy.int64Decimal(value); break
        case 'timestamp': copy.timestamp(value); break
        case 'numeric': copy.numeric(value); break
        case 'bool': copy.bool(value); break
        case 'jsonb': copy.jsonb(value, column.searchable === true ? searchable : undefined); break
        case 'sharedJsonb': copy.sharedJsonb(value); break
      }
    }
  }
  onSpan?.sourceEnd()
}
