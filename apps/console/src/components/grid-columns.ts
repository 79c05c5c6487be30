export interface ColumnNeed {
  id: string
  /** The least width the column reads at, in CSS pixels. */
  minPx: number
  /** 1 is always shown; 3 gives way first, then 2. */
  priority: 1 | 2 | 3
}

/**
 * The columns a grid `width` pixels wide shows: every column while they fit, else without the
 * priority-3 columns (from the right), then the priority-2 ones, until the rest fit. Before the
 * grid is laid out (width 0) every column is shown.
 */
export function columnsThatFit(columns: readonly ColumnNeed[], width: number): { shown: string[]; hidden: string[] } {
  const shown = [...columns]
  const total = () => shown.reduce((sum, column) => sum + column.minPx, 0)
  for (const priority of [3, 2] as const) {
    for (let index = shown.length - 1; width > 0 && total() > width && index >= 0; index--) {
      if (shown[index]?.priority === priority) shown.splice(index, 1)
    }
  }
  const kept = new Set(shown.map((column) => column.id))
  return { shown: [...kept], hidden: columns.filter((column) => !kept.has(column.id)).map((column) => column.id) }
}
