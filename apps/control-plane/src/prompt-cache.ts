import type { PromptView } from './prompt-view.ts'

/**
 * Which prompt of a promptset GET /api/promptset asks for: a version (number), a label (string), or
 * null for the default, the version the `production` label points at ("live").
 */
export type PromptSelector = number | string | null

/** What a promptset lookup found; misses are cached too, so unknown ids cannot flood the database. */
export type PromptsetLookup =
  | { readonly kind: 'found'; readonly view: PromptView }
  | { readonly kind: 'promptset-not-found' }
  | { readonly kind: 'no-live' }
  | { readonly kind: 'version-not-found'; readonly version: number }
  | { readonly kind: 'label-not-found'; readonly label: string }

interface Entry {
  readonly lookup: PromptsetLookup
  readonly expiresAt: number
}

export interface PromptCacheOptions {
  /**
   * How long a lookup is trusted. Writes in this process invalidate at once; other instances
   * converge within this bound (5 s at most).
   */
  ttlMs: number
  /** Promptsets kept at most; the least recently loaded are dropped first. */
  maxPromptsets?: number
  /**
   * Versions and labels kept at most per promptset and project; past it they are dropped together.
   * Bounds what requests for ever new unknown versions or labels can make this cache hold.
   */
  maxSelectors?: number
  now?: () => number
  stats?: PromptCacheStats
}

/** Counts lookups answered from the cache and lookups that went to the database. */
export interface PromptCacheStats {
  hit(): void
  miss(): void
}

const noStats: PromptCacheStats = { hit: () => {}, miss: () => {} }

/**
 * Promptset lookups of GET /api/promptset by (promptset, project, selector). Entries are grouped by
 * promptset so a write to one promptset (a new version, a label move) drops all its entries in one step.
 */
export class PromptCache {
  readonly #ttlMs: number
  readonly #maxPromptsets: number
  readonly #maxSelectors: number
  readonly #now: () => number
  readonly #stats: PromptCacheStats
  // promptset → asking project → selector. Nested rather than one joined key: the project id is the
  // same string on every request of a key and its hash is cached, where a joined key is a new
  // string to build, flatten and hash on every request (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
  // Versions and labels cannot collide as Map keys: 2 and '2' are different keys.
  readonly #promptsets = new Map<string, Map<string, Map<PromptSelector, Entry>>>()
  readonly #inflight = new Map<string, Promise<PromptsetLookup>>()
  // Bumped by every invalidation: a lookup that started before one must not be stored after it,
  // or a write made during the lookup would be hidden for a whole TTL.
  #generation = 0

  constructor(options: PromptCacheOptions) {
    this.#ttlMs = options.ttlMs
    this.#maxPromptsets = options.maxPromptsets ?? 10_000
    this.#maxSelectors = options.maxSelectors ?? 1_000
    this.#now = options.now ?? Date.now
    this.#stats = options.stats ?? noStats
  }

  /** The cached lookup if fresh, else undefined (the hot path: no promise, no allocation). */
  peek(promptsetId: string, projectId: string, selector: PromptSelector): PromptsetLookup | undefined {
    const entry = this.#promptsets.get(promptsetId)?.get(projectId)?.get(selector)
    if (entry === undefined || entry.expiresAt <= this.#now()) return undefined
    this.#stats.hit()
    return entry.lookup
  }

  /** Loads and caches a lookup; concurrent misses for one key share one load. */
  load(promptsetId: string, projectId: string, selector: PromptSelector, loader: () => Promise<PromptsetLookup>): Promise<PromptsetLookup> {
    this.#stats.miss()
    const inflightKey = `${promptsetId}\u0000${projectId}\u0000${selectorKey(selector)}`
    let pending = this.#inflight.get(inflightKey)
    if (pending === undefined) {
      pending = this.#loadAndStore(promptsetId, projectId, selector, loader).finally(() => this.#inflight.delete(inflightKey))
      this.#inflight.set(inflightKey, pending)
    }
    return pending
  }

  async #loadAndStore(promptsetId: string, projectId: string, selector: PromptSelector, loader: () => Promise<PromptsetLookup>): Promise<PromptsetLookup> {
    const generation = this.#generation
    // The TTL counts from before the read, so an entry is never older than ttlMs in database time.
    const startedAt = this.#now()
    const lookup = await loader()
    if (generation === this.#generation && this.#ttlMs > 0) {
      let projects = this.#promptsets.get(promptsetId)
      if (projects === undefined) {
        if (this.#promptsets.size >= this.#maxPromptsets) this.#promptsets.delete(this.#promptsets.keys().next().value as string)
        projects = new Map()
        this.#promptsets.set(promptsetId, projects)
      }
      let selectors = projects.get(projectId)
      if (selectors === undefined) projects.set(projectId, (selectors = new Map()))
      else if (selectors.size >= this.#maxSelectors && !selectors.has(selector)) selectors.clear()
      selectors.set(selector, { lookup, expiresAt: startedAt + this.#ttlMs })
    }
    return lookup
  }

  /** Drops everything cached about a promptset (after a prompt or a label changed here). */
  invalidate(promptsetId: string): void {
    this.#generation++
    this.#promptsets.delete(promptsetId)
  }

  clear(): void {
    this.#generation++
    this.#promptsets.clear()
  }
}

/** A selector as text, kept apart by kind: version 2, label "2" and the default never share a key. */
function selectorKey(selector: PromptSelector): string {
  if (selector === null) return 'default'
  return typeof selector === 'number' ? `version:${selector}` : `label:${selector}`
}
