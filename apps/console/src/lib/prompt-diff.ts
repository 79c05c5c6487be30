import { diffWordsWithSpace } from 'diff'

export interface DiffSegment {
  text: string
  change: 'same' | 'removed' | 'added'
}

export interface SideBySide {
  /** The older version, what was removed marked. */
  left: DiffSegment[]
  /** The newer version, what was added marked. */
  right: DiffSegment[]
  changed: boolean
}

/** Two prompt versions word by word (whitespace and line breaks kept), for showing side by side. */
export function sideBySide(older: string, newer: string): SideBySide {
  const left: DiffSegment[] = []
  const right: DiffSegment[] = []
  let changed = false
  for (const part of diffWordsWithSpace(older, newer)) {
    if (part.added) {
      right.push({ text: part.value, change: 'added' })
      changed = true
    } else if (part.removed) {
      left.push({ text: part.value, change: 'removed' })
      changed = true
    } else {
      left.push({ text: part.value, change: 'same' })
      right.push({ text: part.value, change: 'same' })
    }
  }
  return { left, right, changed }
}
