import { useEffect } from 'react'
import { GridLayout, useContainerWidth, verticalCompactor, type Layout } from 'react-grid-layout'
import 'react-grid-layout/css/styles.css'
import type { Widget, WidgetLayout, WidgetSeries } from '../api/dashboards.api.ts'
import { describeFilter, groupLabels, metricLabels } from '../lib/metrics.ts'
import { MetricChart, type ChartPoint } from './metric-chart.tsx'

const columns = 12
const rowHeight = 64
const margin = 12
/** Where a widget saved without a place goes: two to a row, in the order they are listed. */
const defaultSize = { w: 6, h: 4 }

export function layoutOf(widget: Widget, index: number): WidgetLayout {
  return widget.layout ?? { x: (index % 2) * defaultSize.w, y: Math.floor(index / 2) * defaultSize.h, ...defaultSize }
}

/** What the widget shows, under its title, where the title alone does not say it. */
function subtitleOf(widget: Widget): string {
  const metric = `${metricLabels[widget.metric]}${widget.scoreName ? ` (${widget.scoreName})` : ''}`
  const parts = [
    widget.title === metric && !widget.groupBy ? '' : metric + (widget.groupBy ? ` by ${groupLabels[widget.groupBy].toLowerCase()}` : ''),
    widget.filter ? describeFilter(widget.filter) : '',
  ]
  return parts.filter(Boolean).join(' · ')
}

/**
 * react-draggable (under react-grid-layout) adds a <style> to the page when a drag starts unless
 * one with this id is there already; the console's Content-Security-Policy refuses inline styles,
 * so an element with that id stands in for it and styles.css holds its one rule.
 */
function useDraggableStyleStandIn() {
  useEffect(() => {
    if (document.getElementById('react-draggable-style-el')) return
    const standIn = document.createElement('meta')
    standIn.id = 'react-draggable-style-el'
    document.head.appendChild(standIn)
  }, [])
}

/**
 * The dashboard's widgets on a 12-column grid (react-grid-layout): dragged by their title bar,
 * resized from their corner; the layout is handed over when a drag or resize ends, to be saved.
 */
export function DashboardGrid(props: {
  widgets: Widget[]
  data: ReadonlyMap<string, WidgetSeries> | undefined
  loading: boolean
  onLayout: (layouts: ReadonlyMap<string, WidgetLayout>) => void
  onEdit: (widget: Widget) => void
  onRemove: (widget: Widget) => void
  onPoint: (widget: Widget, point: ChartPoint) => void
  /** Whether the widgets may be moved, resized, edited and removed (dashboards:write). */
  editable: boolean
}) {
  const { widgets, data, loading, onLayout, onEdit, onRemove, onPoint, editable } = props
  const { width, containerRef, mounted } = useContainerWidth()
  useDraggableStyleStandIn()
  const layout: Layout = widgets.map((widget, index) => ({ i: widget.id, ...layoutOf(widget, index), minW: 2, minH: 2 }))
  const settle = (next: Layout) => onLayout(new Map(next.map((item) => [item.i, { x: item.x, y: item.y, w: item.w, h: item.h }])))
  return (
    <div ref={containerRef} className="dashboard-grid">
      {mounted && (
        <GridLayout
          width={width}
          layout={layout}
          gridConfig={{ cols: columns, rowHeight, margin: [margin, margin] }}
          dragConfig={{ enabled: editable, handle: '.widget-handle' }}
          resizeConfig={{ enabled: editable, handles: ['se'] }}
          compactor={verticalCompactor}
          onDragStop={settle}
          onResizeStop={settle}
        >
          {widgets.map((widget, index) => {
            const { h } = layoutOf(widget, index)
            return (
              <article key={widget.id} className="card widget" aria-label={widget.title} data-widget-id={widget.id}>
                <header className="widget-head">
                  <span className="widget-handle" title="Drag to move">
                    <h3>{widget.title}</h3>
                    {subtitleOf(widget) && <span className="muted small">{subtitleOf(widget)}</span>}
                  </span>
                  {editable && (
                    <>
                      <button type="button" className="widget-action" aria-label={`Edit ${widget.title}`} title="Edit" onClick={() => onEdit(widget)}>
                        ✎
                      </button>
                      <button type="button" className="widget-action" aria-label={`Remove ${widget.title}`} title="Remove" onClick={() => onRemove(widget)}>
                        ×
                      </button>
                    </>
                  )}
                </header>
                <div className="widget-body">
                  {data?.get(widget.id) || !loading ? (
                    <MetricChart
                      metric={widget.metric}
                      chart={widget.chart}
                      data={data?.get(widget.id)}
                      height={Math.max(80, h * (rowHeight + margin) - margin - 70)}
                      caption={widget.title}
                      onPoint={(point) => onPoint(widget, point)}
                    />
                  ) : (
                    <p className="muted small">Loading…</p>
                  )}
                </div>
              </article>
            )
          })}
        </GridLayout>
      )}
    </div>
  )
}
