import { useState, type FormEvent } from 'react'
import { useAddComment, useChangeComment, useComments, useDeleteComment, type Comment, type CommentTarget } from '../api/comments.api.ts'
import { formatTime } from '../lib/format.ts'
import { CommentMarkdown } from './comment-markdown.tsx'
import { ErrorMessage } from './status.tsx'

/** The comments on one object, as threads: a first comment, its replies, resolved or open. */
export function CommentThreads({ target, meId, canComment }: { target: CommentTarget; meId: string | null; canComment: boolean }) {
  const comments = useComments(target)
  const add = useAddComment(target)
  if (comments.isPending) return <p className="muted">Loading comments…</p>
  if (comments.isError) return <ErrorMessage error={comments.error} what="the comments" />
  const threads = comments.data.filter((comment) => comment.threadId === null)
  return (
    <section className="card comments" aria-label="Comments">
      <h2>Comments {comments.data.length > 0 && <span className="muted">({comments.data.length})</span>}</h2>
      {threads.length === 0 && <p className="muted">No comments yet.</p>}
      {threads.map((first) => (
        <Thread key={first.id} target={target} first={first} replies={comments.data.filter((comment) => comment.threadId === first.id)} meId={meId} canComment={canComment} />
      ))}
      {canComment && <Composer label="Comment" onSubmit={(body) => add.mutateAsync({ body })} pending={add.isPending} />}
      {add.isError && <ErrorMessage error={add.error} what="the comment" />}
    </section>
  )
}

function Thread({ target, first, replies, meId, canComment }: { target: CommentTarget; first: Comment; replies: Comment[]; meId: string | null; canComment: boolean }) {
  const add = useAddComment(target)
  const change = useChangeComment(target)
  const [replying, setReplying] = useState(false)
  const resolved = first.resolvedAt !== null
  return (
    <article className={resolved ? 'thread resolved' : 'thread'} aria-label={`Thread by ${first.author?.name ?? 'a former member'}`}>
      {[first, ...replies].map((comment) => (
        <CommentItem key={comment.id} target={target} comment={comment} own={meId !== null && comment.author?.id === meId} />
      ))}
      {resolved && <p className="muted small">Resolved by {first.resolvedBy?.name ?? 'a former member'} · {formatTime(first.resolvedAt)}</p>}
      {canComment && (
        <div className="thread-actions">
          <button type="button" className="link-button" onClick={() => setReplying(!replying)}>
            Reply
          </button>
          <button type="button" className="link-button" onClick={() => change.mutate({ id: first.id, resolved: !resolved })}>
            {resolved ? 'Reopen' : 'Resolve'}
          </button>
        </div>
      )}
      {replying && <Composer label="Reply" onSubmit={(body) => add.mutateAsync({ body, threadId: first.id }).then(() => setReplying(false))} pending={add.isPending} />}
      {(add.isError || change.isError) && <ErrorMessage error={add.error ?? change.error} what="the thread" />}
    </article>
  )
}

function CommentItem({ target, comment, own }: { target: CommentTarget; comment: Comment; own: boolean }) {
  const change = useChangeComment(target)
  const remove = useDeleteComment(target)
  const [editing, setEditing] = useState(false)
  return (
    <div className="comment">
      <p className="comment-meta">
        <strong>{comment.author?.name ?? 'A former member'}</strong> <span className="muted small">{formatTime(comment.createdAt)}{comment.updatedAt !== comment.createdAt ? ' · edited' : ''}</span>
      </p>
      {editing ? (
        <Composer label="Save" initial={comment.body} onSubmit={(body) => change.mutateAsync({ id: comment.id, body }).then(() => setEditing(false))} pending={change.isPending} />
      ) : (
        <CommentMarkdown text={comment.body} />
      )}
      {own && !editing && (
        <div className="thread-actions">
          <button type="button" className="link-button" onClick={() => setEditing(true)}>
            Edit
          </button>
          <button
            type="button"
            className="link-button danger"
            onClick={() => {
              if (window.confirm(comment.threadId === null ? 'Delete this comment and its replies?' : 'Delete this comment?')) remove.mutate(comment.id)
            }}
          >
            Delete
          </button>
        </div>
      )}
    </div>
  )
}

function Composer({ label, initial = '', onSubmit, pending }: { label: string; initial?: string; onSubmit: (body: string) => Promise<unknown>; pending: boolean }) {
  const [body, setBody] = useState(initial)
  async function submit(event: FormEvent) {
    event.preventDefault()
    if (body.trim() === '') return
    await onSubmit(body).then(() => setBody(''), () => undefined)
  }
  return (
    <form className="comment-composer" onSubmit={(event) => void submit(event)}>
      <textarea aria-label={label === 'Comment' ? 'New comment' : label} value={body} maxLength={10_000} rows={3} placeholder="Markdown; mention someone with @[Name](user:id)" onChange={(event) => setBody(event.target.value)} />
      <button type="submit" className="button primary" disabled={pending || body.trim() === ''}>
        {label}
      </button>
    </form>
  )
}
