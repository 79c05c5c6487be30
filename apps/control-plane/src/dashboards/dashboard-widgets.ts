import { randomUUID } from 'node:crypto'
import { metricQueryProblem, type DashboardWidget, type TraceFilterParams } from '@tracewell/db'
import { BadRequestError } from '@tracewell/http'
import { checkTraceFilter } from '../routes/trace-filter-body.ts'
import type { WidgetInput } from './dashboard.schemas.ts'

/**
 * The widgets as stored: ids assigned where absent, and what the schema cannot say refused with a
 * 400 naming the widget's field (`body/widgets/2/scoreName: …`). Ids stay as given so the
 * console's layout and links keep pointing at the same widget across edits.
 */
export function checkedWidgets(widgets: readonly WidgetInput[], at = 'body/widgets'): DashboardWidget[] {
  const ids = new Set<string>()
  return widgets.map((widget, index) => {
    const where = `${at}/${index}`
    const problem = metricQueryProblem(widget)
    if (problem !== null) throw new BadRequestError(`${where}/${problem}`)
    if (widget.chart === 'number' && widget.groupBy !== undefined) throw new BadRequestError(`${where}/groupBy: a number shows one figure; group a table or a chart instead`)
    if (widget.filter !== undefined) checkTraceFilter(widget.filter as TraceFilterParams, `${where}/filter`)
    const id = widget.id ?? randomUUID()
    if (ids.has(id)) throw new BadRequestError(`${where}/id: ${JSON.stringify(id)} appears twice`)
    ids.add(id)
    return { ...widget, id }
  })
}
