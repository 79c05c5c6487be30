/**
 * Each project's share of what ingest admitted recently, to attribute the queue's backlog to
 * projects without counting it per project in Redis (a counter there would drift with every
 * resent command and every writer killed between storing and decrementing).
 *
 * Fair share is max-min: with n projects sending (anything within `activeWindowMs`), each may
 * hold up to 1/n of QUEUE_MAX_BACKLOG.
 * A project's held backlog is estimated as the backlog times its share of the spans admitted in
 * the last seconds (an exponentially decayed count, half-life `halfLifeMs`). A project sending a
 * trickle holds almost nothing and is never refused while another floods: the flooding one
 * reaches its share first, gets 429, and leaves the rest of the queue to the others. Alone, a
 * project may fill the whole queue (QUEUE_MAX_BACKLOG bounds it then). With several ingest
 * replicas behind a load balancer each sees about the same mix, so each estimates the same.
 */
export class ProjectShares {
  readonly #halfLifeMs: number
  readonly #activeWindowMs: number
  readonly #weights = new Map<string, { spans: number; at: number }>()
  #admissions = 0

  constructor(halfLifeMs = 5_000, activeWindowMs = 30_000) {
    this.#halfLifeMs = halfLifeMs
    this.#activeWindowMs = activeWindowMs
  }

  admitted(projectId: string, spans: number, now = Date.now()): void {
    const weight = this.#weights.get(projectId)
    if (weight) {
      weight.spans = this.#decayed(weight, now) + spans
      weight.at = now
    } else {
      this.#weights.set(projectId, { spans, at: now })
    }
    // Forget projects that stopped sending, now and then, so the map stays as small as the set of active projects.
    if (++this.#admissions % 1_000 === 0) {
      for (const [id, entry] of this.#weights) if (now - entry.at >= this.#activeWindowMs) this.#weights.delete(id)
    }
  }

  /**
   * Whether `projectId` holds at least its share of `backlog`, the queue's spans (of at most
   * `maxBacklog`): what it holds and its share when it does, null when it may add more.
   */
  overShare(projectId: string, backlog: number, maxBacklog: number, now = Date.now()): { held: number; share: number } | null {
    const own = this.#weights.get(projectId)
    if (!own || backlog === 0) return null
    let total = 0
    let active = 0
    for (const entry of this.#weights.values()) {
      total += this.#decayed(entry, now)
      if (now - entry.at < this.#activeWindowMs) active++
    }
    if (active <= 1 || total === 0) return null
    const held = Math.round((backlog * this.#decayed(own, now)) / total)
    const share = Math.floor(maxBacklog / active)
    return held >= share ? { held, share } : null
  }

  #decayed(entry: { spans: number; at: number }, now: number): number {
    return entry.spans * 0.5 ** (Math.max(0, now - entry.at) / this.#halfLifeMs)
  }
}
