import type { Attributes } from '../api/types.ts'
import { displayValue, sortedEntries } from '../lib/any-value.ts'

/** Attributes as a two-column table, keys sorted; long values wrap, JSON is shown as written. */
export function AttributeTable({ attributes, label }: { attributes: Attributes | undefined; label: string }) {
  const entries = sortedEntries(attributes)
  if (entries.length === 0) return <p className="muted">None.</p>
  return (
    <table className="attributes" aria-label={label}>
      <tbody>
        {entries.map(([key, value]) => (
          <tr key={key}>
            <th scope="row">{key}</th>
            <td>
              <LongText text={displayValue(value)} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

const previewChars = 1_200

/** Text cut to a preview when long, with a button to show all of it. */
export function LongText({ text, className }: { text: string; className?: string }) {
  if (text.length <= previewChars) return <span className={className ?? 'value'}>{text}</span>
  return (
    <details className="long-text">
      <summary>
        <span className={className ?? 'value'}>{text.slice(0, previewChars)}…</span>
        <span className="more">Show all {text.length.toLocaleString('en-US')} characters</span>
      </summary>
      <span className={className ?? 'value'}>{text}</span>
    </details>
  )
}
