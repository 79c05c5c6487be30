import { useId } from 'react'
import type { ChatMessage, Conversation, ToolCall } from '@tracewell/llm-messages'
import { LongText } from './attribute-table.tsx'

const roleLabels: Record<string, string> = { system: 'System', user: 'User', assistant: 'Assistant', tool: 'Tool', function: 'Function', model: 'Assistant', developer: 'Developer' }

/** An LLM call's messages as a chat: what was sent, then what the model answered. */
export function ConversationView({ conversation }: { conversation: Conversation }) {
  // Several conversations share a page (a session): the calls' element ids are this one's own.
  const scope = useId()
  const callElementId = (callId: string) => `${scope}-call-${callId}`
  const calledIds = new Set(conversation.messages.flatMap((message) => message.toolCalls.map((call) => call.id)))
  return (
    <div className="conversation">
      <ol className="messages" aria-label="Messages">
        {conversation.messages.map((message, index) => {
          const role = message.role.toLowerCase()
          const known = role in roleLabels ? role : 'other'
          const answered = message.toolCallId !== undefined && calledIds.has(message.toolCallId) ? message.toolCallId : undefined
          return (
            <li key={index} className={`message role-${known} ${message.direction}`}>
              <div className="message-head">
                <span className="role">{roleLabels[role] ?? message.role}</span>
                {message.name && <span className="muted">{message.name}</span>}
                {message.toolCallId !== undefined && <ToolResultLabel message={message} target={answered === undefined ? undefined : callElementId(answered)} />}
                {message.direction === 'output' && <span className="muted">response</span>}
              </div>
              {message.content !== '' && (message.toolCallId !== undefined || role === 'tool' ? <ToolResultText text={message.content} /> : <LongText text={message.content} className="message-text" />)}
              {message.toolCalls.map((call, callIndex) => (
                <ToolCallView key={callIndex} call={call} elementId={call.id === undefined ? undefined : callElementId(call.id)} />
              ))}
            </li>
          )
        })}
      </ol>
      <p className="muted small">Read from {conversation.conventions.join(' and ')} attributes.</p>
    </div>
  )
}

function ToolCallView({ call, elementId }: { call: ToolCall; elementId: string | undefined }) {
  const name = call.name || '(unnamed tool)'
  return (
    // A group, not a region: a chat of many calls would otherwise flood the landmarks.
    <div role="group" className="tool-call" id={elementId} tabIndex={elementId === undefined ? undefined : -1} aria-label={`Tool call ${name}`}>
      <div className="tool-call-head">
        <span className="tool-badge">tool call</span> <code className="tool-name">{name}</code>
        {call.id !== undefined && <span className="muted small">id {call.id}</span>}
      </div>
      {call.arguments !== '' && <pre className="tool-arguments" aria-label="Arguments">{prettyJson(call.arguments)}</pre>}
    </div>
  )
}

/** "result of get_weather", a button back to that call when it is in this conversation. */
function ToolResultLabel({ message, target }: { message: ChatMessage; target: string | undefined }) {
  const label = `result of ${message.answers ?? `call ${message.toolCallId}`}`
  if (target === undefined) return <span className="tool-result-of">{label}</span>
  return (
    <button
      type="button"
      className="link-button tool-result-of"
      title={`Go to the call ${message.toolCallId}`}
      onClick={() => {
        const element = document.getElementById(target)
        element?.scrollIntoView({ block: 'center' })
        element?.focus({ preventScroll: true })
      }}
    >
      ↑ {label}
    </button>
  )
}

/** A tool's result is often JSON: indented when it parses, as written otherwise. */
function ToolResultText({ text }: { text: string }) {
  const pretty = prettyJson(text)
  if (pretty === text) return <LongText text={text} className="message-text" />
  return <pre className="tool-result">{pretty}</pre>
}

function prettyJson(text: string): string {
  const trimmed = text.trimStart()
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return text
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}
