import { isDeepStrictEqual } from 'node:util'

// Before and after, reduced to what differs: a project's retention keeps its unchanged fields
// out of the entry, and a list (the model prices, the members) keeps only the items that were
// added, removed or changed, matched by their id.

export interface Change {
  before: unknown
  after: unknown
}

/** The fields an item of a list is known by, tried in this order. */
const identities = ['id', 'userId', 'projectId', 'name'] as const

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/** What differs between `before` and `after`; null when nothing does. */
export function changedParts(before: unknown, after: unknown): Change | null {
  if (isDeepStrictEqual(before, after)) return null
  if (isRecord(before) && isRecord(after)) return changedFields(before, after)
  if (Array.isArray(before) && Array.isArray(after)) {
    const identity = identities.find((field) => identifies(field, before) && identifies(field, after))
    if (identity !== undefined) return changedItems(identity, before as Record<string, unknown>[], after as Record<string, unknown>[])
  }
  return { before, after }
}

function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): Change {
  const was: Record<string, unknown> = {}
  const is: Record<string, unknown> = {}
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const change = changedParts(before[name], after[name])
    if (change === null) continue
    if (Object.hasOwn(before, name)) was[name] = change.before
    if (Object.hasOwn(after, name)) is[name] = change.after
  }
  return { before: was, after: is }
}

/** Whether every item is an object with a distinct `field` of its own. */
function identifies(field: string, items: unknown[]): boolean {
  const seen = new Set<unknown>()
  for (const item of items) {
    const key = isRecord(item) ? item[field] : undefined
    if ((typeof key !== 'string' && typeof key !== 'number') || seen.has(key)) return false
    seen.add(key)
  }
  return true
}

/** The items added, removed or changed, each whole, in the order of their list. */
function changedItems(identity: string, before: Record<string, unknown>[], after: Record<string, unknown>[]): Change {
  const afterById = new Map(after.map((item) => [item[identity], item]))
  const beforeById = new Map(before.map((item) => [item[identity], item]))
  return {
    before: before.filter((item) => !isDeepStrictEqual(item, afterById.get(item[identity]))),
    after: after.filter((item) => !isDeepStrictEqual(item, beforeById.get(item[identity]))),
  }
}
