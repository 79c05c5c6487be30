import type { Conversation } from '../lib/conversation.ts'
import { LongText } from './attribute-table.tsx'

const roleLabels: Record<string, string> = { system: 'System', user: 'User', assistant: 'Assistant', tool: 'Tool', function: 'Function', model: 'Assistant', developer: 'Developer' }

/** An LLM call's messages as a chat: what was sent, then what the model answered. */
export function ConversationView({ conversation }: { conversation: Conversation }) {
  return (
    <div className="conversation">
      <ol className="messages" aria-label="Messages">
        {conversation.messages.map((message, index) => {
          const role = message.role.toLowerCase()
          const known = role in roleLabels ? role : 'other'
          return (
            <li key={index} className={`message role-${known} ${message.direction}`}>
              <div className="message-head">
                <span className="role">{roleLabels[role] ?? message.role}</span>
                {message.name && <span className="muted">{message.name}</span>}
                {message.direction === 'output' && <span className="muted">response</span>}
              </div>
              {message.content !== '' && <LongText text={message.content} className="message-text" />}
              {message.toolCalls.map((call, callIndex) => (
                <div key={callIndex} className="tool-call">
                  <span className="muted">calls</span> <code>{call.name || '(unnamed tool)'}</code>
                  {call.arguments && <pre>{prettyJson(call.arguments)}</pre>}
                </div>
              ))}
            </li>
          )
        })}
      </ol>
      <p className="muted small">Read from {conversation.conventions.join(' and ')} attributes.</p>
    </div>
  )
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}
