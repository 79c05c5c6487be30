import '../alerting.css'
import { Fragment, useState, type FormEvent } from 'react'
import { useChannels, useCreateChannel, useDeleteChannel, useDeliveries, useTestChannel, type ChannelType, type Delivery, type NotificationChannel } from '../api/notification-channels.api.ts'
import { CopyButton } from '../components/copy-button.tsx'
import { useProject } from '../components/project-scope.tsx'
import { Empty, ErrorMessage, Loading } from '../components/status.tsx'
import { formatDuration, formatTime } from '../lib/format.ts'
import { Can } from '../components/can.tsx'

const typeLabels: Record<ChannelType, string> = { webhook: 'Webhook', slack: 'Slack', email: 'Email' }

/** Where the project's monitors send their notifications: made, tested and deleted here, each with its delivery log. */
export default function NotificationChannelsPage() {
  const { projectId } = useProject()
  const channels = useChannels(projectId)
  const remove = useDeleteChannel(projectId)
  const [open, setOpen] = useState<string | null>(null)
  return (
    <section className="page" aria-labelledby="channels-title">
      <div className="page-header">
        <h1 id="channels-title">Notification channels</h1>
        <span className="muted">Where monitors say that they started alerting and that they resolved: a signed webhook, a Slack channel, an email address</span>
      </div>
      {channels.isPending && <Loading label="Loading the channels" />}
      {channels.isError && <ErrorMessage error={channels.error} what="the channels" />}
      {channels.data?.length === 0 && <Empty>No channel yet: add one below, then choose it on a monitor.</Empty>}
      {channels.data && channels.data.length > 0 && (
        <table className="list-table channels" aria-label="Notification channels">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Sends to</th>
              <th scope="col">Added</th>
              <th scope="col">Test</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {channels.data.map((channel) => (
              <Fragment key={channel.id}>
                <ChannelRow
                  projectId={projectId}
                  channel={channel}
                  logOpen={open === channel.id}
                  onToggleLog={() => setOpen(open === channel.id ? null : channel.id)}
                  deleting={remove.isPending}
                  onDelete={() => remove.mutate(channel.id)}
                />
                {open === channel.id && (
                  <tr className="detail-row">
                    <td colSpan={6}>
                      <DeliveryLog projectId={projectId} channel={channel} />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      )}
      {remove.isError && <ErrorMessage error={remove.error} what="the channel" action="delete" />}
      <NewChannel projectId={projectId} />
    </section>
  )
}

function ChannelRow(props: { projectId: string; channel: NotificationChannel; logOpen: boolean; onToggleLog: () => void; deleting: boolean; onDelete: () => void }) {
  const { projectId, channel, logOpen, onToggleLog, deleting, onDelete } = props
  const test = useTestChannel(projectId, channel.id)
  return (
    <tr>
      <td>{channel.name}</td>
      <td>{typeLabels[channel.type]}</td>
      <td>
        <code>{channel.url ?? channel.address}</code>
        {channel.secretHint && <span className="muted small"> · secret {channel.secretHint}</span>}
      </td>
      <td>{formatTime(channel.createdAt)}</td>
      <td className="test-cell" aria-live="polite">
        <span className="small">
          {test.isPending && <span className="muted">sending…</span>}
          {test.isSuccess && (
            <span role="status" title={test.data.status === null ? 'not reached' : `status ${test.data.status}`}>
              <span className={test.data.ok ? 'badge ok' : 'badge error'}>{test.data.ok ? 'delivered' : 'failed'}</span> {test.data.message} ({formatDuration(test.data.latencyMs)})
            </span>
          )}
        </span>
        {test.isError && <ErrorMessage error={test.error} what="a test message" action="send" />}
      </td>
      <td className="actions">
        <Can permission="notification-channels:write">
          <button
            type="button"
            className="button small"
            aria-label={`Send a test to ${channel.name}`}
            disabled={test.isPending}
            onClick={() => test.mutate(undefined, { onSuccess: () => !logOpen && onToggleLog() })}
          >
            Send test
          </button>
        </Can>
        <button type="button" className="button small" aria-expanded={logOpen} aria-label={`Deliveries of ${channel.name}`} onClick={onToggleLog}>
          Deliveries
        </button>
        <Can permission="notification-channels:write">
          <button
            type="button"
            className="button small danger"
            aria-label={`Delete ${channel.name}`}
            disabled={deleting}
            onClick={() => {
              if (window.confirm(`Delete the channel ${channel.name}? Monitors stop sending to it.`)) onDelete()
            }}
          >
            Delete
          </button>
        </Can>
      </td>
    </tr>
  )
}

const statusBadge: Record<Delivery['status'], string> = { delivered: 'badge ok', failed: 'badge error', pending: 'badge neutral' }

/** Each delivery, newest first, with its tries: when, the answer's status or the error, how long. */
function DeliveryLog({ projectId, channel }: { projectId: string; channel: NotificationChannel }) {
  const deliveries = useDeliveries(projectId, channel.id, true)
  if (deliveries.isPending) return <Loading label="Loading the deliveries" />
  if (deliveries.isError) return <ErrorMessage error={deliveries.error} what="the deliveries" />
  if (deliveries.data.length === 0) return <p className="muted">Nothing sent to {channel.name} yet: Send test tries it now.</p>
  return (
    <table className="list-table deliveries" aria-label={`Deliveries of ${channel.name}`}>
      <thead>
        <tr>
          <th scope="col">Made</th>
          <th scope="col">What</th>
          <th scope="col">Status</th>
          <th scope="col">Tries</th>
          <th scope="col">Last answer</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.data.map((delivery) => (
          <tr key={delivery.id}>
            <td>{formatTime(delivery.createdAt)}</td>
            <td>{delivery.kind === 'test' ? 'test message' : 'monitor notification'}</td>
            <td>
              <span className={statusBadge[delivery.status]}>{delivery.status}</span>
              {delivery.status === 'pending' && delivery.nextAttemptAt && <span className="muted small"> next try {formatTime(delivery.nextAttemptAt)}</span>}
            </td>
            <td>{delivery.attempts}</td>
            <td>
              <ul className="attempts">
                {delivery.log.map((attempt, index) => (
                  <li key={`${attempt.at}-${index}`}>
                    {formatTime(attempt.at)}: {attempt.ok ? 'ok' : 'failed'}
                    {attempt.status !== null && ` (HTTP ${attempt.status})`}
                    {attempt.error && <span className="muted"> {attempt.error}</span>} · {formatDuration(attempt.durationMs)}
                  </li>
                ))}
              </ul>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function NewChannel({ projectId }: { projectId: string }) {
  const create = useCreateChannel(projectId)
  const [name, setName] = useState('')
  const [type, setType] = useState<ChannelType>('webhook')
  const [target, setTarget] = useState('')
  const [secret, setSecret] = useState<{ channel: string; value: string } | null>(null)

  function submit(event: FormEvent) {
    event.preventDefault()
    const body = type === 'email' ? { name: name.trim(), type, address: target.trim() } : { name: name.trim(), type, url: target.trim() }
    create.mutate(body, {
      onSuccess: (made) => {
        setName('')
        setTarget('')
        setSecret(made.secret ? { channel: made.name, value: made.secret } : null)
      },
    })
  }

  return (
    <Can permission="notification-channels:write">
      <form className="card form narrow" onSubmit={submit} aria-labelledby="new-channel-title">
        <h2 id="new-channel-title">New channel</h2>
        <label>
          <span>Name</span>
          <input required value={name} onChange={(event) => setName(event.target.value)} placeholder="on-call" />
        </label>
        <fieldset className="choices">
          <legend>Type</legend>
          {(Object.keys(typeLabels) as ChannelType[]).map((value) => (
            <label key={value} className="checkbox">
              <input type="radio" name="channel-type" value={value} checked={type === value} onChange={() => (setType(value), setTarget(''))} />
              {typeLabels[value]}
            </label>
          ))}
        </fieldset>
        <label>
          <span>{type === 'email' ? 'Email address' : type === 'slack' ? 'Slack incoming-webhook URL' : 'Webhook URL'}</span>
          <input
            required
            type={type === 'email' ? 'email' : 'url'}
            value={target}
            spellCheck={false}
            onChange={(event) => setTarget(event.target.value)}
            placeholder={type === 'email' ? 'oncall@example.com' : type === 'slack' ? 'https://hooks.slack.com/services/…' : 'https://example.com/tracewell-alerts'}
          />
        </label>
        <p className="muted small hint">
          {type === 'webhook' && 'A JSON POST signed in x-tracewell-signature (HMAC-SHA256 with the secret shown once when the channel is made).'}
          {type === 'slack' && 'A message with the monitor, its value and a link to the traces that matched.'}
          {type === 'email' && 'Sent over the server’s SMTP settings.'}
        </p>
        {create.isError && <ErrorMessage error={create.error} what="the channel" action="add" />}
        {secret && (
          <div className="new-secret" role="status" aria-labelledby="new-channel-secret">
            <p id="new-channel-secret">
              <strong>The signing secret of {secret.channel}.</strong> Copy it into your receiver now: it is shown only once.
            </p>
            <div className="secret-row">
              <code className="secret" aria-label="The new signing secret">
                {secret.value}
              </code>
              <CopyButton text={secret.value} />
            </div>
            <button type="button" className="button" onClick={() => setSecret(null)}>
              I have saved it
            </button>
          </div>
        )}
        {create.isSuccess && !secret && (
          <p role="status" className="success">
            Added {create.data.name}.
          </p>
        )}
        <button type="submit" className="button primary" disabled={create.isPending || name.trim() === '' || target.trim() === ''}>
          Add channel
        </button>
      </form>
    </Can>
  )
}
