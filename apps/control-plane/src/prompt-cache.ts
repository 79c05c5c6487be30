import type { PromptView } from './prompt-view.ts'

/** What a registry lookup found; misses are cached too, so unknown ids cannot flood the database. */
export type RegistryLookup =
  | { readonly kind: 'found'; readonly view: PromptView }
  | { readonly kind: 'registry-not-found' }
  | { readonly kind: 'no-live' }
  | { readonly kind: 'version-not-found'; readonly version: number }

interface Entry {
  readonly lookup: RegistryLookup
  readonly expiresAt: number
}

export interface PromptCacheOptions {
  /**
   * How long a lookup is trusted. Writes in this process invalidate at once; other instances
   * converge within this bound (5 s at most).
   */
  ttlMs: number
  /** Registries kept at most; the least recently loaded are dropped first. */
  maxRegistries?: number
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
 * Registry lookups of GET /api/promptset by (registry, project, version or live). Entries are
 * grouped by registry so a write to one registry drops all its entries in one step.
 */
export class PromptCache {
  readonly #ttlMs: number
  readonly #maxRegistries: number
  readonly #now: () => number
  readonly #stats: PromptCacheStats
  // registry → asking project → version (null: the live one). Nested rather than one joined key:
  // the project id is the same string on every request of a key and its hash is cached, where a
  // joined key is a new string to build, flatten and hash on every request (~1.5 µs in situ).
  readonly #registries = new Map<string, Map<string, Map<number | null, Entry>>>()
  readonly #inflight = new Map<string, Promise<RegistryLookup>>()
  // Bumped by every invalidation: a lookup that started before one must not be stored after it,
  // or a write made during the lookup would be hidden for a whole TTL.
  #generation = 0

  constructor(options: PromptCacheOptions) {
    this.#ttlMs = options.ttlMs
    this.#maxRegistries = options.maxRegistries ?? 10_000
    this.#now = options.now ?? Date.now
    this.#stats = options.stats ?? noStats
  }

  /** The cached lookup if fresh, else undefined (the hot path: no promise, no allocation). */
  peek(promptsetId: string, projectId: string, version: number | null): RegistryLookup | undefined {
    const entry = this.#registries.get(promptsetId)?.get(projectId)?.get(version)
    if (entry === undefined || entry.expiresAt <= this.#now()) return undefined
    this.#stats.hit()
    return entry.lookup
  }

  /** Loads and caches a lookup; concurrent misses for one key share one load. */
  load(promptsetId: string, projectId: string, version: number | null, loader: () => Promise<RegistryLookup>): Promise<RegistryLookup> {
    this.#stats.miss()
    const inflightKey = `${promptsetId}\u0000${projectId}\u0000${version ?? 'live'}`
    let pending = this.#inflight.get(inflightKey)
    if (pending === undefined) {
      pending = this.#loadAndStore(promptsetId, projectId, version, loader).finally(() => this.#inflight.delete(inflightKey))
      this.#inflight.set(inflightKey, pending)
    }
    return pending
  }

  async #loadAndStore(promptsetId: string, projectId: string, version: number | null, loader: () => Promise<RegistryLookup>): Promise<RegistryLookup> {
    const generation = this.#generation
    // The TTL counts from before the read, so an entry is never older than ttlMs in database time.
    const startedAt = this.#now()
    const lookup = await loader()
    if (generation === this.#generation && this.#ttlMs > 0) {
      let projects = this.#registries.get(promptsetId)
      if (projects === undefined) {
        if (this.#registries.size >= this.#maxRegistries) this.#registries.delete(this.#registries.keys().next().value as string)
        projects = new Map()
        this.#registries.set(promptsetId, projects)
      }
      let versions = projects.get(projectId)
      if (versions === undefined) projects.set(projectId, (versions = new Map()))
      versions.set(version, { lookup, expiresAt: startedAt + this.#ttlMs })
    }
    return lookup
  }

  /** Drops everything cached about a registry (after a prompt or the live version changed here). */
  invalidate(promptsetId: string): void {
    this.#generation++
    this.#registries.delete(promptsetId)
  }

  clear(): void {
    this.#generation++
    this.#registries.clear()
  }
}
