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
import { useEffect, useRef, useState, type KeyboardEvent, type ReactNode } from 'react'

export interface GridColumnMeta {
  /** A CSS grid track, e.g. '10rem' or 'minmax(12rem, 2fr)'. */
  width: string
  align?: 'end'
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
  const columns = table.getAllLeafColumns()
  const template = columns.map((column) => column.columnDef.meta?.width ?? '1fr').join(' ')

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
    <div className="grid-frame">
      <div className="grid-scroll" ref={scrollRef}>
        <table className="grid" aria-label={label} aria-rowcount={rows.length + 1}>
          <thead>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id} className="grid-row grid-head" style={{ gridTemplateColumns: template }} aria-rowindex={1}>
                {group.headers.map((header) => {
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
                  {row.getAllCells().map((cell) => (
                    <td key={cell.id} className={cell.column.columnDef.meta?.align === 'end' ? 'end' : undefined}>
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
        {hasMore && (
          <button type="button" className="button" onClick={loadMore} disabled={isFetchingMore}>
            {isFetchingMore ? 'Loading…' : 'Load more'}
          </button>
        )}
      </div>
    </div>
  )
}
