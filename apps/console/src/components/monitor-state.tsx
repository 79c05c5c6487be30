import type { Monitor } from '../api/monitors.api.ts'
import { formatTime } from '../lib/format.ts'

const stateBadges = { ok: { className: 'badge ok', label: 'ok' }, alerting: { className: 'badge error', label: 'alerting' }, no_data: { className: 'badge neutral', label: 'no data' } } as const

/** Whether the monitor is muted now: it is still evaluated, but notifies nobody until then. */
export function isMuted(monitor: Pick<Monitor, 'mutedUntil'>, now = Date.now()): boolean {
  return monitor.mutedUntil !== null && Date.parse(monitor.mutedUntil) > now
}

/** The monitor's state as a badge, and "muted" beside it while it is. */
export function MonitorStateBadge({ monitor }: { monitor: Pick<Monitor, 'state' | 'mutedUntil'> }) {
  const badge = stateBadges[monitor.state]
  return (
    <span className="monitor-state">
      <span className={badge.className}>{badge.label}</span>
      {isMuted(monitor) && (
        <span className="badge muted" title={`Muted until ${formatTime(monitor.mutedUntil)}`}>
          muted
        </span>
      )}
    </span>
  )
}
