import {
  createSortedRowModel,
  rowSortingFeature,
  sortFn_alphanumeric,
  sortFn_basic,
  tableFeatures,
  type ReactTable,
  type Row,
  type RowData,
} from '@tanstack/react-table'
import { useVirtualizer } from '@tanstack/react-virtual'
import { useEffect, useRef, useState, type KeyboardEvent, type ReactNode, type RefObject } from 'react'
import { columnsThatFit } from './grid-columns.ts'

export interface GridColumnMeta {
  /** A CSS grid track, e.g. '10rem' or 'minmax(12rem, 2fr)'. */
  width: string
  align?: 'end'
  /** The least width the column reads at, in CSS pixels (100 unless given). */
  minPx?: number
  /**
   * Which columns give way first when the grid is narrow: 1 (the default) is always shown, then
   * 2, then 3 are put behind the "more columns" toggle, 3 first.
   */
  priority?: 1 | 2 | 3
}

/** The table features every grid of the console uses: sorting, over the loaded rows when the server does not sort. */
export const gridFeatures = tableFeatures({
  rowSortingFeature,
  sortedRowModel: createSortedRowModel(),
  sortFns: { basic: sortFn_basic, alphanumeric: sortFn_alphanumeric },
  columnMeta: {} as GridColumnMeta,
})
export type GridFeatures = typeof gridFeatures

export interface VirtualGridProps<T extends RowData> {
  table: ReactTable<GridFeatures, T>
  label: string
  onOpen: (row: T) => void
  onSort: (columnId: string) => void
  hasMore: boolean
  isFetchingMore: boolean
  loadMore: () => void
  rowClassName?: (row: T) => string | undefined
  empty: ReactNode
}

const rowHeight = 38

/**
 * A table whose body renders only the rows in view (TanStack Virtual), so thousands of loaded
 * rows cost what a screenful does. More rows load as the end comes into view, or with the button.
 * Keyboard: Tab into the rows, arrows / Page Up / Page Down / Home / End to move, Enter to open.
 */
export function VirtualGrid<T extends RowData>({ table, label, onOpen, onSort, hasMore, isFetchingMore, loadMore, rowClassName, empty }: VirtualGridProps<T>) {
  const scrollRef = useRef<HTMLDivElement>(null)
  const rows = table.getRowModel().rows
  const [active, setActive] = useState(0)
  const focusAfterMove = useRef(false)
  const virtualizer = useVirtualizer({ count: rows.length, getScrollElement: () => scrollRef.current, estimateSize: () => rowHeight, overscan: 12 })
  const items = virtualizer.getVirtualItems()
  const frameRef = useRef<HTMLDivElement>(null)
  const frameWidth = useWidthOf(frameRef)
  const [allColumns, setAllColumns] = useState(false)
  const leafColumns = table.getAllLeafColumns()
  const fitting = columnsThatFit(
    leafColumns.map((column) => ({ id: column.id, minPx: column.columnDef.meta?.minPx ?? 100, priority: column.columnDef.meta?.priority ?? 1 })),
    frameWidth,
  )
  const shown = new Set(allColumns ? leafColumns.map((column) => column.id) : fitting.shown)
  const columns = leafColumns.filter((column) => shown.has(column.id))
  const template = columns.map((column) => column.columnDef.meta?.width ?? '1fr').join(' ')
  // With every column asked for on a narrow screen, the grid scrolls sideways inside its frame.
  const minWidth = allColumns ? leafColumns.reduce((sum, column) => sum + (column.columnDef.meta?.minPx ?? 100), 0) : undefined

  const lastIndex = items.at(-1)?.index ?? -1
  useEffect(() => {
    if (hasMore && !isFetchingMore && lastIndex >= rows.length - 10) loadMore()
  }, [hasMore, isFetchingMore, lastIndex, rows.length, loadMore])

  useEffect(() => {
    if (!focusAfterMove.current) return
    focusAfterMove.current = false
    scrollRef.current?.querySelector<HTMLElement>(`[data-index="${active}"]`)?.focus()
  })

  const activeIndex = Math.min(active, Math.max(rows.length - 1, 0))

  function move(to: number) {
    const next = Math.max(0, Math.min(rows.length - 1, to))
    setActive(next)
    focusAfterMove.current = true
    virtualizer.scrollToIndex(next, { align: 'auto' })
  }

  function onKeyDown(event: KeyboardEvent) {
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 400) / rowHeight) - 1)
    const moves: Record<string, number> = { ArrowDown: activeIndex + 1, ArrowUp: activeIndex - 1, PageDown: activeIndex + page, PageUp: activeIndex - page, Home: 0, End: rows.length - 1 }
    const to = moves[event.key]
    if (to !== undefined) {
      event.preventDefault()
      move(to)
    } else if (event.key === 'Enter' && rows[activeIndex]) {
      event.preventDefault()
      onOpen(rows[activeIndex].original)
    }
  }

  return (
    <div className="grid-frame" ref={frameRef}>
      <div className="grid-scroll" ref={scrollRef}>
        <table className="grid" aria-label={label} aria-rowcount={rows.length + 1} style={minWidth === undefined ? undefined : { minWidth }}>
          <thead>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id} className="grid-row grid-head" style={{ gridTemplateColumns: template }} aria-rowindex={1}>
                {group.headers.filter((header) => shown.has(header.column.id)).map((header) => {
                  const sorted = header.column.getIsSorted()
                  const align = header.column.columnDef.meta?.align
                  return (
                    <th key={header.id} scope="col" className={align === 'end' ? 'end' : undefined} aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none'}>
                      {header.column.getCanSort() ? (
                        <button type="button" className="sort-button" onClick={() => onSort(header.column.id)}>
                          <table.FlexRender header={header} />
                          <span aria-hidden="true" className="sort-mark">
                            {sorted === 'asc' ? '▲' : sorted === 'desc' ? '▼' : ''}
                          </span>
                        </button>
                      ) : (
                        <table.FlexRender header={header} />
                      )}
                    </th>
                  )
                })}
              </tr>
            ))}
          </thead>
          <tbody style={{ height: virtualizer.getTotalSize() }} onKeyDown={onKeyDown}>
            {items.map((item) => {
              const row = rows[item.index] as Row<GridFeatures, T>
              return (
                <tr
                  key={row.id}
                  data-index={item.index}
                  aria-rowindex={item.index + 2}
                  tabIndex={item.index === activeIndex ? 0 : -1}
                  className={['grid-row', rowClassName?.(row.original)].filter(Boolean).join(' ')}
                  style={{ gridTemplateColumns: template, transform: `translateY(${item.start}px)`, height: rowHeight }}
                  onClick={(event) => {
                    setActive(item.index)
                    // A link inside the row opens itself (and can open a new tab).
                    if (!(event.target as HTMLElement).closest('a')) onOpen(row.original)
                  }}
                  onFocus={() => setActive(item.index)}
                >
                  {row.getAllCells().filter((cell) => shown.has(cell.column.id)).map((cell) => (
                    <td key={cell.id} className={cell.column.columnDef.meta?.align === 'end' ? 'end' : undefined} title={titleOf(cell.getValue())}>
                      <table.FlexRender cell={cell} />
                    </td>
                  ))}
                </tr>
              )
            })}
          </tbody>
        </table>
        {rows.length === 0 && !isFetchingMore && <div className="grid-empty">{empty}</div>}
      </div>
      <div className="grid-footer">
        <span className="muted" aria-live="polite">
          {rows.length === 1 ? '1 row' : `${rows.length.toLocaleString('en-US')} rows`}
          {hasMore ? ' loaded' : ''}
        </span>
        {(fitting.hidden.length > 0 || allColumns) && (
          <button type="button" className="button link-button" aria-pressed={allColumns} onClick={() => setAllColumns(!allColumns)}>
            {allColumns ? 'Fewer columns' : `${fitting.hidden.length} more ${fitting.hidden.length === 1 ? 'column' : 'columns'}`}
          </button>
        )}
        {hasMore && (
          <button type="button" className="button" onClick={loadMore} disabled={isFetchingMore}>
            {isFetchingMore ? 'Loading…' : 'Load more'}
          </button>
        )}
      </div>
    </div>
  )
}

/** A cell's own text as its title, so that text cut short by the column shows whole on hover. */
function titleOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** The element's width, kept up to date as it resizes (0 before the first layout). */
function useWidthOf(ref: RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(0)
  useEffect(() => {
    const element = ref.current
    if (element === null) return
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry?.contentRect.width ?? 0)))
    observer.observe(element)
    return () => observer.disconnect()
  }, [ref])
  return width
}
