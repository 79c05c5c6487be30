import { useState, type FormEvent } from 'react'
import { DETECTORS, useMaskingRules, useSaveMaskingRules, useTestMasking, type Detector, type MaskingRule } from '../api/masking.api.ts'
import { ErrorMessage, Loading } from './status.tsx'

const detectorLabels: Record<Detector, string> = {
  email: 'Email addresses',
  phone: 'Phone numbers',
  credit_card: 'Card numbers (Luhn-checked)',
  iban: 'IBANs (checksum-checked)',
  ip: 'IP addresses',
  secret: 'API keys and tokens',
  regex: 'Custom pattern (RE2)',
}

/** A rule as the form holds it: text fields as typed. */
interface RuleDraft {
  detector: Detector
  pattern: string
  attributes: string
  replacement: string
}

const draftOf = (rule: MaskingRule): RuleDraft => ({ detector: rule.detector, pattern: rule.pattern ?? '', attributes: (rule.attributes ?? []).join(', '), replacement: rule.replacement ?? '' })

function ruleOf(draft: RuleDraft): MaskingRule {
  const attributes = draft.attributes
    .split(',')
    .map((glob) => glob.trim())
    .filter((glob) => glob !== '')
  return {
    detector: draft.detector,
    ...(draft.detector === 'regex' ? { pattern: draft.pattern } : {}),
    ...(attributes.length > 0 ? { attributes } : {}),
    ...(draft.replacement === '' ? {} : { replacement: draft.replacement }),
  }
}

/**
 * A project's masking rules, edited as a list, with a tester that runs the rules being edited
 * (saved or not) on pasted text through the server's engine, the one ingest runs.
 */
export function MaskingRulesEditor({ projectId }: { projectId: string }) {
  const masking = useMaskingRules(projectId)
  const save = useSaveMaskingRules(projectId)
  const [drafts, setDrafts] = useState<RuleDraft[] | null>(null)
  if (masking.isPending) return <Loading label="Loading the masking rules" />
  if (masking.isError) return <ErrorMessage error={masking.error} what="the masking rules" />
  const shown = drafts ?? masking.data.rules.map(draftOf)
  const edit = (next: RuleDraft[]) => {
    // A refusal names a rule as it was: once the rules change it no longer applies.
    if (save.isError) save.reset()
    setDrafts(next)
  }
  const change = (index: number, patch: Partial<RuleDraft>) => edit(shown.map((draft, at) => (at === index ? { ...draft, ...patch } : draft)))

  function submit(event: FormEvent) {
    event.preventDefault()
    save.mutate(shown.map(ruleOf), { onSuccess: () => setDrafts(null) })
  }

  return (
    <div className="masking">
      <form className="form" onSubmit={submit} aria-label="Masking rules">
        <p className="muted small">
          Ingest replaces what these rules find before a span is stored: in attribute values (JSON in them stays JSON), span names and status messages. Nothing masked reaches the
          database. {masking.data.source === 'default' ? 'The server’s default rules apply now.' : 'The project’s own rules apply now.'}
        </p>
        <table className="list-table masking-rules" aria-label="Rules">
          <thead>
            <tr>
              <th scope="col">Finds</th>
              <th scope="col">Pattern</th>
              <th scope="col">In attributes</th>
              <th scope="col">Replaced by</th>
              <th scope="col">
                <span className="visually-hidden">Remove</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.length === 0 && (
              <tr>
                <td colSpan={5} className="muted">
                  No rule: nothing is masked.
                </td>
              </tr>
            )}
            {shown.map((draft, index) => (
              <tr key={index}>
                <td>
                  <select aria-label={`Rule ${index + 1} finds`} value={draft.detector} onChange={(event) => change(index, { detector: event.target.value as Detector })}>
                    {DETECTORS.map((detector) => (
                      <option key={detector} value={detector}>
                        {detectorLabels[detector]}
                      </option>
                    ))}
                  </select>
                </td>
                <td>
                  {draft.detector === 'regex' ? (
                    <input aria-label={`Rule ${index + 1} pattern`} required placeholder="ACCT-[0-9]{6}" value={draft.pattern} onChange={(event) => change(index, { pattern: event.target.value })} />
                  ) : (
                    <span className="muted">built in</span>
                  )}
                </td>
                <td>
                  <input aria-label={`Rule ${index + 1} attributes`} placeholder="all, names too" value={draft.attributes} onChange={(event) => change(index, { attributes: event.target.value })} />
                </td>
                <td>
                  <input aria-label={`Rule ${index + 1} replacement`} placeholder={`[REDACTED:${draft.detector}]`} value={draft.replacement} onChange={(event) => change(index, { replacement: event.target.value })} />
                </td>
                <td className="actions">
                  <button type="button" className="button small danger" aria-label={`Remove rule ${index + 1}`} onClick={() => edit(shown.filter((_, at) => at !== index))}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <p className="muted small">Attributes: glob patterns of attribute keys, comma-separated (llm.prompts, gen_ai.*); empty applies the rule everywhere.</p>
        <div className="inline-fields">
          <button type="button" className="button" onClick={() => edit([...shown, { detector: 'email', pattern: '', attributes: '', replacement: '' }])}>
            Add a rule
          </button>
          <button type="submit" className="button primary" disabled={save.isPending}>
            Save rules
          </button>
          {masking.data.source === 'project' && (
            <button type="button" className="button" disabled={save.isPending} onClick={() => save.mutate(null, { onSuccess: () => setDrafts(null) })}>
              Use the server’s default
            </button>
          )}
        </div>
        {save.isError && <ErrorMessage error={save.error} what="the rules" action="save" />}
        {save.isSuccess && drafts === null && (
          <p role="status" className="success">
            Saved. Ingest applies the rules within seconds.
          </p>
        )}
      </form>
      <MaskingTester projectId={projectId} rules={shown.map(ruleOf)} />
    </div>
  )
}

function MaskingTester({ projectId, rules }: { projectId: string; rules: MaskingRule[] }) {
  const test = useTestMasking(projectId)
  const [text, setText] = useState('')

  function submit(event: FormEvent) {
    event.preventDefault()
    test.mutate({ rules, text })
  }

  return (
    <form className="form masking-tester" onSubmit={submit} aria-label="Test the rules">
      <label>
        <span>Text to test, as an attribute would hold it (a prompt, a JSON message list)</span>
        <textarea rows={4} value={text} onChange={(event) => setText(event.target.value)} />
      </label>
      <button type="submit" className="button" disabled={test.isPending}>
        Test the rules above
      </button>
      {test.isError && <ErrorMessage error={test.error} what="the text" action="test" />}
      {test.data && (
        <div role="status" aria-label="Masked text">
          <p className="muted small">{test.data.changed ? 'Stored as:' : 'Nothing found: stored as it is.'}</p>
          <pre className="masked-text">{test.data.masked}</pre>
        </div>
      )}
    </form>
  )
}
