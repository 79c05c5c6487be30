// Why this exists: a request body waits while Redis acknowledges it (ingest) or while its job is
// copied into Postgres (writer). Under load that outlasts several minor collections, so the
// Buffer is promoted, and V8 then counts its bytes against the old generation's budget until the
// next full collection frees them. At 150 KB a body, that budget ran out every ~100 requests and
// ingest spent a fifth of its CPU marking its whole heap (docs/benchmarks.md). Whoever is done
// with a body frees it at once instead.

/**
 * Frees a body's memory now rather than at V8's next full collection; afterwards it reads as
 * empty, so only its last user may call this. A Buffer is freed only if it owns all of its
 * ArrayBuffer (Buffer.concat's result past 4 KB does): a smaller one is a slice of the pool Node
 * shares between Buffers, and a view into a larger reply must leave the rest alone.
 */
export function releaseBody(body: Uint8Array): void {
  const memory = body.buffer
  if (!(memory instanceof ArrayBuffer) || body.byteLength === 0 || body.byteOffset !== 0 || body.byteLength !== memory.byteLength) return
  try {
    memory.transfer(0)
  } catch {
    // Node marks some ArrayBuffers as not detachable (its Buffer pool, any passed to
    // markAsUntransferable), and JavaScript cannot ask which: such a body is left to the
    // collector, as every body was before. Freeing early must never fail a request.
  }
}
