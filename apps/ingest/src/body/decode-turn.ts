/**
 * Runs the decodes of the requests read in one turn of the event loop together, one after another
 * in a single callback once the turn's reads are done (setImmediate), instead of each inside the
 * read of its own socket.
 *
 * Why: the same decode costs two to three times as much interleaved with HTTP parsing and answer
 * writing as it does in a loop (28 µs a one-span body in a loop, 70–90 µs in the server, the same
 * hour): between two requests the CPU's caches hold the HTTP server's code, not the decoder's.
 * Decoded in a run, a one-span request costs ingest about a tenth less, end to end
 * (docs/benchmarks.md, "Decodes in turns"). A request waits at most for the others read in its
 * turn; its answer waits for Redis in any case.
 *
 * Each task is synchronous and settles only its own promise: one body's 400 is its request's alone.
 */
export class DecodeTurn {
  #tasks: Array<() => void> = []

  /** Resolves with what `decode` returns, or rejects with what it throws, at the end of this turn. */
  run<Result>(decode: () => Result): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#tasks.push(() => {
        try {
          resolve(decode())
        } catch (error) {
          reject(error)
        }
      })
      if (this.#tasks.length === 1) setImmediate(this.#runAll)
    })
  }

  readonly #runAll = (): void => {
    const tasks = this.#tasks
    this.#tasks = []
    for (const task of tasks) task()
  }
}
