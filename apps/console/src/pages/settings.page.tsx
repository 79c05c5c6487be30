import { useEffect, useState, type FormEvent } from 'react'
import { useSearchParams } from 'react-router'
import type { ApiKeyScope, CleanupRun, RetentionPolicy } from '../api/types.ts'
import { useApiKeys, useCreateApiKey, useCreateProject, useIngestLimit, useProjects, useRetention, useRevokeApiKey, useSaveIngestLimit, useSaveRetention, type KeyScope } from '../api/projects.api.ts'
import { useSession } from '../api/session.api.ts'
import { Can, useCan } from '../components/can.tsx'
import { CopyButton } from '../components/copy-button.tsx'
import { ErasureManager } from '../components/erasure-manager.tsx'
import { MaskingRulesEditor } from '../components/masking-rules-editor.tsx'
import { ModelPriceManager } from '../components/model-price-manager.tsx'
import { rememberProject } from '../components/project-scope.tsx'
import { SpanExport } from '../components/span-export.tsx'
import { ErrorMessage, Loading } from '../components/status.tsx'
import { formatAgo, formatTime } from '../lib/format.ts'

export default function SettingsPage() {
  const projects = useProjects()
  const session = useSession()
  const [params, setParams] = useSearchParams()
  const list = projects.data ?? []
  const project = list.find((candidate) => candidate.id === params.get('project_id')) ?? list[0]
  // What a project's admin runs (its keys, settings, export and erasures) is shown to those who may.
  const maySetProject = useCan('settings:write', project?.id)
  const mayManageKeys = useCan('keys:manage', project?.id)
  const mayRunProject = maySetProject && mayManageKeys
  const mayManageTeamKeys = useCan('team-keys:manage')

  const chooseProject = (projectId: string) => {
    rememberProject(projectId)
    const next = new URLSearchParams(params)
    next.set('project_id', projectId)
    setParams(next, { replace: true })
  }

  return (
    <section className="page settings" aria-labelledby="settings-title">
      <div className="page-header">
        <h1 id="settings-title">Settings</h1>
      </div>
      <section aria-labelledby="projects-title" className="card">
        <h2 id="projects-title">Projects</h2>
        {projects.isPending && <Loading label="Loading projects" />}
        {projects.isError && <ErrorMessage error={projects.error} what="projects" />}
        {list.length > 0 && (
          <table className="list-table" aria-label="Projects">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="visually-hidden">Choose</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((candidate) => (
                <tr key={candidate.id} className={candidate.id === project?.id ? 'chosen' : undefined}>
                  <td>{candidate.name}</td>
                  <td>
                    <code>{candidate.id}</code>
                  </td>
                  <td>{formatTime(candidate.createdAt)}</td>
                  <td>
                    {candidate.id === project?.id ? (
                      <span className="muted">shown below</span>
                    ) : (
                      <button type="button" className="button small" onClick={() => chooseProject(candidate.id)}>
                        Manage
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Can permission="projects:create">
          <NewProjectForm onCreated={chooseProject} />
        </Can>
      </section>

      {project && !mayRunProject && <p className="muted">The keys, prices, retention, limits, masking, export and erasures of {project.name} are run by its admins.</p>}
      {project && mayRunProject && (
        <>
          <section aria-labelledby="project-keys-title" className="card">
            <h2 id="project-keys-title">Keys of {project.name}</h2>
            <p className="muted">Project keys send traces and read prompts. Give each application its own, so one can be revoked alone.</p>
            <KeyManager scope={{ projectId: project.id }} kindLabel="project key" />
          </section>
          <section aria-labelledby="model-prices-title" className="card">
            <h2 id="model-prices-title">Model prices of {project.name}</h2>
            <p className="muted">For self-hosted, fine-tuned and local models, or a negotiated rate: used instead of the built-in price table for this project's spans.</p>
            <ModelPriceManager key={project.id} projectId={project.id} />
          </section>
          <section aria-labelledby="retention-title" className="card">
            <h2 id="retention-title">Retention of {project.name}</h2>
            <RetentionForm key={project.id} projectId={project.id} />
          </section>
          <section aria-labelledby="ingest-limit-title" className="card">
            <h2 id="ingest-limit-title">Ingest rate limit of {project.name}</h2>
            <IngestLimitForm key={project.id} projectId={project.id} />
          </section>
          <section aria-labelledby="masking-title" className="card">
            <h2 id="masking-title">Masking of {project.name}</h2>
            <MaskingRulesEditor key={project.id} projectId={project.id} />
          </section>
          <section aria-labelledby="export-title" className="card">
            <h2 id="export-title">Export of {project.name}</h2>
            <SpanExport key={project.id} projectId={project.id} />
          </section>
          <section aria-labelledby="erasures-title" className="card">
            <h2 id="erasures-title">Erasures of {project.name}</h2>
            <p className="muted">Delete everything stored about one of your users, a session or some traces, for example when a user asks to be forgotten.</p>
            <ErasureManager key={project.id} projectId={project.id} />
          </section>
        </>
      )}

      {session.data && mayManageTeamKeys && (
        <section aria-labelledby="team-keys-title" className="card">
          <h2 id="team-keys-title">Team keys of {session.data.teamName}</h2>
          <p className="muted">Team keys manage projects and keys, and sign in here. Revoking the key you signed in with signs you out.</p>
          <KeyManager scope={{ teamId: session.data.teamId }} kindLabel="team key" />
        </section>
      )}
    </section>
  )
}

function NewProjectForm({ onCreated }: { onCreated: (projectId: string) => void }) {
  const create = useCreateProject()
  const [name, setName] = useState('')
  function submit(event: FormEvent) {
    event.preventDefault()
    create.mutate({ name: name.trim() }, { onSuccess: (project) => (setName(''), onCreated(project.id)) })
  }
  return (
    <form className="inline-form" onSubmit={submit} aria-label="Create a project">
      <label>
        <span>New project</span>
        <input required maxLength={200} placeholder="Name" value={name} onChange={(event) => setName(event.target.value)} />
      </label>
      <button type="submit" className="button primary" disabled={create.isPending || name.trim() === ''}>
        Create project
      </button>
      {create.isError && <ErrorMessage error={create.error} what="the project" />}
    </form>
  )
}

const allScopes: readonly ApiKeyScope[] = ['ingest', 'read', 'write']

const scopeHelp: Record<ApiKeyScope, string> = {
  ingest: 'send traces and feedback',
  read: 'queries and prompts',
  write: 'what a member may do through the API',
}

/** Keys by prefix, with what each may do, who made it and until when; a new key is shown once, with a copy button; revoking asks first. */
function KeyManager({ scope, kindLabel }: { scope: KeyScope; kindLabel: string }) {
  const keys = useApiKeys(scope)
  const create = useCreateApiKey(scope)
  const revoke = useRevokeApiKey(scope)
  const [created, setCreated] = useState<string | null>(null)
  const [scopes, setScopes] = useState<ApiKeyScope[]>(['ingest', 'read'])
  const [expiresOn, setExpiresOn] = useState('')
  const scopeId = 'projectId' in scope ? scope.projectId : scope.teamId
  const projectKeys = 'projectId' in scope

  // A secret of one project must not linger on the screen of another.
  useEffect(() => setCreated(null), [scopeId])

  function submit(event: FormEvent) {
    event.preventDefault()
    const terms = { ...(projectKeys ? { scopes } : {}), ...(expiresOn === '' ? {} : { expiresAt: new Date(`${expiresOn}T23:59:59`).toISOString() }) }
    create.mutate(terms, { onSuccess: (result) => setCreated(result.apiKey) })
  }

  return (
    <div className="keys">
      {keys.isPending && <Loading label="Loading keys" />}
      {keys.isError && <ErrorMessage error={keys.error} what="keys" />}
      {keys.data && (
        <table className="list-table" aria-label={`${kindLabel}s`}>
          <thead>
            <tr>
              <th scope="col">Key</th>
              {projectKeys && <th scope="col">Scopes</th>}
              <th scope="col">Made by</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {keys.data.length === 0 && (
              <tr>
                <td colSpan={projectKeys ? 7 : 6} className="muted">
                  No key yet.
                </td>
              </tr>
            )}
            {keys.data.map((key) => (
              <tr key={key.id} className={key.revokedAt ? 'revoked' : undefined}>
                <td>
                  <code>{key.prefix}…</code>
                </td>
                {projectKeys && <td>{key.scopes ? key.scopes.join(', ') : <span className="muted">all (made before scopes)</span>}</td>}
                <td>{key.createdBy ? <span title={key.createdBy.email}>{key.createdBy.name}</span> : <span className="muted">a key or the first start</span>}</td>
                <td>{formatTime(key.createdAt)}</td>
                <td>{key.expiresAt ? formatTime(key.expiresAt) : <span className="muted">never</span>}</td>
                <td>{key.lastUsedAt ? formatAgo(key.lastUsedAt) : <span className="muted">never</span>}</td>
                <td>
                  {key.revokedAt ? (
                    <span className="badge muted">revoked {formatTime(key.revokedAt)}</span>
                  ) : (
                    <button
                      type="button"
                      className="button small danger"
                      disabled={revoke.isPending}
                      aria-label={`Revoke ${key.prefix}…`}
                      onClick={() => {
                        if (window.confirm(`Revoke ${key.prefix}…? Anything using it stops working within 5 seconds.`)) revoke.mutate(key.id)
                      }}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {revoke.isError && <ErrorMessage error={revoke.error} what="the revocation" />}
      {created ? (
        <div className="new-secret" role="status" aria-labelledby={`new-secret-${scopeId}`}>
          <p id={`new-secret-${scopeId}`}>
            <strong>Your new {kindLabel}.</strong> Copy it now: it is shown only once and cannot be read again.
          </p>
          <div className="secret-row">
            <code className="secret" aria-label={`The new ${kindLabel}`}>
              {created}
            </code>
            <CopyButton text={created} />
          </div>
          <button type="button" className="button" onClick={() => setCreated(null)}>
            I have saved it
          </button>
        </div>
      ) : (
        <form className="inline-form" onSubmit={submit} aria-label={`Create a ${kindLabel}`}>
          {projectKeys && (
            <fieldset className="key-scopes">
              <legend>Scopes</legend>
              {allScopes.map((name) => (
                <label key={name} className="checkbox" title={scopeHelp[name]}>
                  <input
                    type="checkbox"
                    checked={scopes.includes(name)}
                    onChange={(event) => setScopes(event.target.checked ? allScopes.filter((candidate) => candidate === name || scopes.includes(candidate)) : scopes.filter((candidate) => candidate !== name))}
                  />
                  <span>
                    {name} <span className="muted small">({scopeHelp[name]})</span>
                  </span>
                </label>
              ))}
            </fieldset>
          )}
          <label>
            <span>Expires (optional)</span>
            <input type="date" value={expiresOn} onChange={(event) => setExpiresOn(event.target.value)} />
          </label>
          <button type="submit" className="button primary" disabled={create.isPending || (projectKeys && scopes.length === 0)}>
            Create a {kindLabel}
          </button>
        </form>
      )}
      {create.isError && <ErrorMessage error={create.error} what={`the ${kindLabel}`} />}
    </div>
  )
}

function RetentionForm({ projectId }: { projectId: string }) {
  const policy = useRetention(projectId)
  const save = useSaveRetention(projectId)
  const [enabled, setEnabled] = useState<boolean | null>(null)
  const [days, setDays] = useState<string | null>(null)
  if (policy.isPending) return <Loading label="Loading the retention policy" />
  if (policy.isError) return <ErrorMessage error={policy.error} what="the retention policy" />
  const shownEnabled = enabled ?? policy.data.enabled
  const shownDays = days ?? String(policy.data.retentionDays)

  function submit(event: FormEvent) {
    event.preventDefault()
    save.mutate({ enabled: shownEnabled, retentionDays: Number(shownDays) }, { onSuccess: () => (setEnabled(null), setDays(null)) })
  }

  return (
    <form className="form" onSubmit={submit} aria-label="Retention policy">
      <label className="checkbox">
        <input type="checkbox" checked={shownEnabled} onChange={(event) => setEnabled(event.target.checked)} />
        <span>Delete traces older than the period below</span>
      </label>
      <label>
        <span>Days kept</span>
        <input type="number" min={1} max={3650} required value={shownDays} onChange={(event) => setDays(event.target.value)} />
      </label>
      <p className="muted small">
        {policy.data.lastRunAt ? `Last cleanup of this project ${formatTime(policy.data.lastRunAt)}: ${policy.data.lastDeletedSpans ?? 0} spans deleted.` : 'No cleanup has run for this project yet.'}
      </p>
      <CleanupStatus cleanup={policy.data.cleanup} />
      {save.isError && <ErrorMessage error={save.error} what="the policy" />}
      {save.isSuccess && enabled === null && days === null && (
        <p role="status" className="success">
          Saved.
        </p>
      )}
      <button type="submit" className="button primary" disabled={save.isPending}>
        Save retention
      </button>
    </form>
  )
}

const runOutcomes: Record<CleanupRun['outcome'], string> = {
  complete: 'complete',
  incomplete: 'stopped by its time budget, the next run continues',
  failed: 'failed for a project, see the janitor’s log',
}

/**
 * How the cleanup that applies the policy runs, the same for every project: on npm start's own
 * schedule or when a CronJob calls the janitor; its last and next run; and a warning when its
 * endpoint is open to anyone who can reach it (issue 48 §8).
 */
function CleanupStatus({ cleanup }: { cleanup: RetentionPolicy['cleanup'] }) {
  const { lastRun } = cleanup
  const howItRuns = cleanup.endpoint === null
    ? 'No janitor has started on this database yet: policies apply once one runs.'
    : cleanup.schedule === null
      ? 'Cleanup runs when a scheduler (the janitor’s CronJob) calls the janitor.'
      : `Cleanup runs on the schedule ${cleanup.schedule} (UTC)${cleanup.nextRunAt ? `; next run ${formatTime(cleanup.nextRunAt)}` : ''}.`
  return (
    <div className="cleanup-status" aria-label="Cleanup runs">
      <p className="muted small">{howItRuns}</p>
      <p className="muted small">
        {lastRun
          ? `Last run ${formatTime(lastRun.startedAt)} (${lastRun.trigger === 'schedule' ? 'scheduled' : 'called'}, ${runOutcomes[lastRun.outcome]}): ${lastRun.deletedSpans.toLocaleString('en')} spans deleted${lastRun.droppedPartitions > 0 ? `, ${lastRun.droppedPartitions} expired days dropped` : ''}.`
          : 'The cleanup has not run yet.'}
      </p>
      {cleanup.endpoint === 'open' && (
        <p role="alert" className="warning-message">
          The cleanup endpoint is open: CRON_API_KEY is not set, so anyone who can reach /api/cron/cleanup-traces can run the cleanup. Set CRON_API_KEY in production.
        </p>
      )}
    </div>
  )
}

type LimitChoice = 'default' | 'own' | 'none'

const describeLimit = (limit: { spansPerSecond: number | null; burst: number | null }) =>
  limit.spansPerSecond === null
    ? 'no limit'
    : `${limit.spansPerSecond.toLocaleString('en')} span${limit.spansPerSecond === 1 ? '' : 's'} per second, bursts of ${(limit.burst ?? 0).toLocaleString('en')}`

/** The settings' default, a limit of the project's own, or none at all; ingest applies a change within seconds. */
function IngestLimitForm({ projectId }: { projectId: string }) {
  const limit = useIngestLimit(projectId)
  const save = useSaveIngestLimit(projectId)
  const [choice, setChoice] = useState<LimitChoice | null>(null)
  const [rate, setRate] = useState<string | null>(null)
  const [burst, setBurst] = useState<string | null>(null)
  if (limit.isPending) return <Loading label="Loading the ingest rate limit" />
  if (limit.isError) return <ErrorMessage error={limit.error} what="the ingest rate limit" />
  const stored: LimitChoice = limit.data.source === 'default' ? 'default' : limit.data.spansPerSecond === null ? 'none' : 'own'
  const shownChoice = choice ?? stored
  const ownRate = stored === 'own' ? limit.data.spansPerSecond : null
  const shownRate = rate ?? (ownRate === null ? '' : String(ownRate))
  const shownBurst = burst ?? (stored === 'own' && limit.data.burst !== null ? String(limit.data.burst) : '')

  function submit(event: FormEvent) {
    event.preventDefault()
    const body = shownChoice === 'default' ? null : shownChoice === 'none' ? { spansPerSecond: null } : { spansPerSecond: Number(shownRate), ...(shownBurst === '' ? {} : { burst: Number(shownBurst) }) }
    save.mutate(body, { onSuccess: () => (setChoice(null), setRate(null), setBurst(null)) })
  }

  const option = (value: LimitChoice, label: string) => (
    <label className="checkbox">
      <input type="radio" name={`ingest-limit-${projectId}`} value={value} checked={shownChoice === value} onChange={() => setChoice(value)} />
      <span>{label}</span>
    </label>
  )

  return (
    <form className="form" onSubmit={submit} aria-label="Ingest rate limit">
      <p className="muted small">
        Spans this project may send: over the limit ingest answers 429 with Retry-After, and exporters send again later. Now: {describeLimit(limit.data)}
        {limit.data.source === 'default' ? ' (the default)' : ''}.
      </p>
      <fieldset className="choices">
        <legend className="visually-hidden">Which limit applies</legend>
        {option('default', `The default of the settings: ${describeLimit(limit.data.default)}`)}
        {option('own', 'A limit of its own')}
        {option('none', 'No limit')}
      </fieldset>
      {shownChoice === 'own' && (
        <div className="inline-fields">
          <label>
            <span>Spans per second</span>
            <input type="number" min={1} max={10_000_000} step={1} required value={shownRate} onChange={(event) => setRate(event.target.value)} />
          </label>
          <label>
            <span>Burst (spans)</span>
            <input type="number" min={1} max={100_000_000} step={1} placeholder="twice the rate" value={shownBurst} onChange={(event) => setBurst(event.target.value)} />
          </label>
        </div>
      )}
      {save.isError && <ErrorMessage error={save.error} what="the rate limit" />}
      {save.isSuccess && choice === null && rate === null && burst === null && (
        <p role="status" className="success">
          Saved. Ingest applies it within seconds.
        </p>
      )}
      <button type="submit" className="button primary" disabled={save.isPending}>
        Save rate limit
      </button>
    </form>
  )
}
