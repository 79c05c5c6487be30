import { useSearchParams } from 'react-router'

/**
 * The service name of the traces Tracewell makes itself (the playground, experiments, judges):
 * packages/llm-calls' selfServiceName. The trace list, sessions and usage leave them out unless
 * asked with `include_tracewell_calls=true`, so an application's figures are its own.
 */
export const selfServiceName = 'tracewell'
export const ownCallsParam = 'include_tracewell_calls'

/** Whether the page's URL asks for Tracewell's own calls, and a setter that keeps the rest of the URL. */
export function useOwnCallsParam(): [boolean, (on: boolean) => void] {
  const [params, setParams] = useSearchParams()
  const on = params.get(ownCallsParam) === 'true'
  const set = (next: boolean) => {
    const updated = new URLSearchParams(params)
    if (next) updated.set(ownCallsParam, 'true')
    else updated.delete(ownCallsParam)
    setParams(updated)
  }
  return [on, set]
}

export function OwnCallsSwitch({ on, onChange }: { on: boolean; onChange: (on: boolean) => void }) {
  return (
    <label className="own-calls-switch" title="Traces of the playground, experiments and judges: left out by default, so the figures are your application's">
      <input type="checkbox" role="switch" checked={on} onChange={(event) => onChange(event.target.checked)} />
      Show Tracewell’s own calls
    </label>
  )
}

/** The mark of a trace Tracewell made itself. */
export function SelfBadge() {
  return (
    <span className="badge self" title="A call Tracewell made itself: the playground, an experiment or a judge">
      Tracewell
    </span>
  )
}
