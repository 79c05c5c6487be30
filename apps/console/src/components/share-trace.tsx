import { useState } from 'react'
import { useRevokeShare, useShareTrace, useTraceShares } from '../api/trace-shares.api.ts'
import { formatTime } from '../lib/format.ts'
import { CopyButton } from './copy-button.tsx'
import { ErrorMessage } from './status.tsx'

/** A trace's share links: make one (its link shown once, to copy), see and revoke the others. */
export function ShareTrace({ projectId, traceId }: { projectId: string; traceId: string }) {
  const [open, setOpen] = useState(false)
  const shares = useTraceShares(projectId, traceId, open)
  const share = useShareTrace(projectId, traceId)
  const revoke = useRevokeShare(projectId, traceId)
  const live = (shares.data ?? []).filter((item) => item.revokedAt === null && (item.expiresAt === null || Date.parse(item.expiresAt) > Date.now()))
  return (
    <>
      <button type="button" className="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        Share
      </button>
      {open && (
        <div className="card share-panel" role="region" aria-label="Share this trace">
          <p className="muted small">Anyone with the link sees this trace, read-only, without signing in — and nothing else. Revoke it when it is no longer needed.</p>
          <button type="button" className="button primary" disabled={share.isPending} onClick={() => share.mutate(undefined)}>
            Make a link
          </button>
          {share.data && (
            <p className="share-link">
              <input aria-label="Share link" readOnly value={share.data.url} onFocus={(event) => event.target.select()} />
              <CopyButton text={share.data.url} label="Copy link" />
            </p>
          )}
          {share.isError && <ErrorMessage error={share.error} what="the link" />}
          {live.length > 0 && (
            <ul className="share-list">
              {live.map((item) => (
                <li key={item.id}>
                  Link made {formatTime(item.createdAt)}
                  {item.expiresAt ? `, until ${formatTime(item.expiresAt)}` : ''}{' '}
                  <button type="button" className="link-button danger" onClick={() => revoke.mutate(item.id)}>
                    Revoke
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </>
  )
}
