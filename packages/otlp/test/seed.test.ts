import assert from 'node:assert/strict'
import { it } from 'node:test'
import { decodeJsonTraces, SpanKind } from '../src/index.ts'

// The map-form trace body of docs/api.md#send-traces: attributes as a map of {stringValue}, times as
// decimal strings, the LLM chat attributes of a chat completion.
const messages = JSON.stringify([
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Capital of France?' },
])
const choices = JSON.stringify([{ role: 'assistant', content: 'Paris' }])
const seedBody = `{
  "resourceSpans": [{
    "resource": {"attributes": {
      "service.name": {"stringValue": "support-bot"},
      "service.version": {"stringValue": "1.4.2"}
    }},
    "scopeSpans": [{
      "spans": [{
        "traceId": "5B8EFFF798038103D269B633813FC60C",
        "spanId": "EEE19B7EC3C1B174",
        "name": "openai.chat.completions.create",
        "kind": 3,
        "startTimeUnixNano": "1544712660000000000",
        "endTimeUnixNano": "1544712661000000000",
        "attributes": {
          "llm.vendor": {"stringValue": "openai"},
          "llm.request.model": {"stringValue": "gpt-4"},
          "llm.request.type": {"stringValue": "chat_completion"},
          "llm.request.messages": {"stringValue": ${JSON.stringify(messages)}},
          "llm.response.choices": {"stringValue": ${JSON.stringify(choices)}}
        }
      }]
    }]
  }]
}`

it('decodes the map-form example', () => {
  const { format, spans } = decodeJsonTraces(JSON.parse(seedBody))
  assert.equal(format, 'otlp-json')
  assert.equal(spans.length, 1)
  const [span] = spans
  assert.ok(span)
  assert.equal(span.traceId, '5b8efff798038103d269b633813fc60c')
  assert.equal(span.spanId, 'eee19b7ec3c1b174')
  assert.equal(span.parentSpanId, null)
  assert.equal(span.kind, SpanKind.CLIENT)
  assert.equal(span.durationNs, '1000000000')
  assert.equal(span.serviceName, 'support-bot')
  assert.equal(span.serviceVersion, '1.4.2')
  assert.equal(span.scopeName, null)
  assert.equal(span.llmVendor, 'openai')
  assert.equal(span.llmModel, 'gpt-4')
  assert.equal(span.llmRequestType, 'chat') // llm.request.type chat_completion, in the OTel vocabulary
  assert.deepEqual(span.attributes['llm.request.messages'], { stringValue: messages })
  assert.deepEqual(span.attributes['llm.response.choices'], { stringValue: choices })
})
