/**
 * Runs the decodes of the requests read in one turn of the event loop together, one after another
 * in one callback once the turn's reads are done (setImmediate), instead of each inside the read of
 * its own socket: run apart, between two requests' HTTP parsing, the same decode costs two to three
 * times as much (docs/benchmarks.md, "Decodes in turns"). Each task is synchronous and settles only
 * its own promise: one body's 400 is its request's alone.
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
