import { readFileSync } from 'node:fs'
import { once } from 'node:events'
import { createGzip, deflateSync, gzipSync } from 'node:zlib'

/** The recorded client bodies shared by every package (see test-fixtures/README.md). */
const FIXTURES_DIR = new URL('../../../../test-fixtures/', import.meta.url)

export const fixtureBytes = (name: string): Buffer => readFileSync(new URL(name, FIXTURES_DIR))
export const fixtureJson = (name: string): unknown => JSON.parse(fixtureBytes(name).toString('utf8'))

export interface RequestsIndex {
  traces: Record<'otlpJson' | 'otlpProto' | 'langtraceTs', { traceId: string; spanIds: string[] }>
}
export const requestsIndex = fixtureJson('requests.json') as RequestsIndex

export const SEED_MESSAGES = JSON.stringify([
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Capital of France?' },
])
export const SEED_CHOICES = JSON.stringify([{ role: 'assistant', content: 'Paris' }])

/** The map-form trace body of docs/api.md#send-traces, with ids in upper case (accepted, stored lowercase). */
export const seedBody = Buffer.from(
  JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: { 'service.name': { stringValue: 'support-bot' }, 'service.version': { stringValue: '1.4.2' } } },
        scopeSpans: [
          {
            spans: [
              {
                traceId: '5B8EFFF798038103D269B633813FC60C',
                spanId: 'EEE19B7EC3C1B174',
                name: 'openai.chat.completions.create',
                kind: 3,
                startTimeUnixNano: '1544712660000000000',
                endTimeUnixNano: '1544712661000000000',
                attributes: {
                  'llm.vendor': { stringValue: 'openai' },
                  'llm.request.model': { stringValue: 'gpt-4' },
                  'llm.request.type': { stringValue: 'chat_completion' },
                  'llm.usage.prompt_tokens': { intValue: '12' },
                  'llm.usage.completion_tokens': { intValue: '3' },
                  'llm.request.messages': { stringValue: SEED_MESSAGES },
                  'llm.response.choices': { stringValue: SEED_CHOICES },
                },
              },
            ],
          },
        ],
      },
    ],
  }),
)

/** What a span of a body must look like once queued (and stored). */
export interface ExpectedSpan {
  traceId: string
  spanId: string
  serviceName: string
  llmVendor: string | null
  llmModel: string | null
  inputTokens: number | null
  outputTokens: number | null
  /** `llm.request.messages` exactly as the client sent it, or null when the span has none. */
  messages: string | null
}

export interface BodyCase {
  name: string
  contentType: string
  body: Buffer
  spans: ExpectedSpan[]
}

const STRING_LITERAL = String.raw`"((?:[^"\\]|\\.)*)"`
const MESSAGES_PATTERNS = [
  new RegExp(String.raw`"key"\s*:\s*"llm\.request\.messages"\s*,\s*"value"\s*:\s*\{\s*"stringValue"\s*:\s*` + STRING_LITERAL),
  new RegExp(String.raw`"llm\.request\.messages"\s*:\s*` + STRING_LITERAL),
]

/** The `llm.request.messages` value as written in a JSON fixture file, unescaped once. */
export function sentMessages(name: string): string {
  const text = fixtureBytes(name).toString('utf8')
  for (const pattern of MESSAGES_PATTERNS) {
    const literal = pattern.exec(text)?.[1]
    if (literal !== undefined) return JSON.parse(`"${literal}"`) as string
  }
  throw new Error(`no llm.request.messages in ${name}`)
}

/** The messages string of the protobuf fixture: the JSON array that its bytes carry verbatim. */
function protobufMessages(name: string): string {
  const text = fixtureBytes(name).toString('latin1')
  const start = text.indexOf('[{"role"')
  const end = text.indexOf('}]', start) + 2
  return Buffer.from(text.slice(start, end), 'latin1').toString('utf8')
}

const span = (
  traceId: string,
  spanId: string,
  serviceName: string,
  llm: { vendor: string; model: string; input: number | null; output: number | null; messages: string } | null,
): ExpectedSpan => ({
  traceId,
  spanId,
  serviceName,
  llmVendor: llm?.vendor ?? null,
  llmModel: llm?.model ?? null,
  inputTokens: llm?.input ?? null,
  outputTokens: llm?.output ?? null,
  messages: llm?.messages ?? null,
})

/** Every recorded client body, with the Content-Type its client sent. */
export const clientBodies: BodyCase[] = [
  {
    name: 'otel-js-otlp-proto-1.bin',
    contentType: 'application/x-protobuf',
    body: fixtureBytes('otel-js-otlp-proto-1.bin'),
    spans: [span('f9c70fe8575dedef4f7bf1c3c9d3b9a3', 'dd4750b796992104', 'checkout-service', { vendor: 'openai', model: 'gpt-4o', input: 42, output: 7, messages: protobufMessages('otel-js-otlp-proto-1.bin') })],
  },
  {
    name: 'otel-js-otlp-proto-2.bin',
    contentType: 'application/x-protobuf',
    body: fixtureBytes('otel-js-otlp-proto-2.bin'),
    spans: [span('f9c70fe8575dedef4f7bf1c3c9d3b9a3', '54981588596c6a79', 'checkout-service', null)],
  },
  {
    name: 'otel-js-otlp-json-1.json',
    contentType: 'application/json',
    body: fixtureBytes('otel-js-otlp-json-1.json'),
    spans: [span('995de3342686b2287bcc0988c6bd2737', 'a1cc6c3931297cac', 'checkout-service', { vendor: 'openai', model: 'gpt-4o', input: 42, output: 7, messages: sentMessages('otel-js-otlp-json-1.json') })],
  },
  {
    name: 'otel-js-otlp-json-2.json',
    contentType: 'application/json',
    body: fixtureBytes('otel-js-otlp-json-2.json'),
    spans: [span('995de3342686b2287bcc0988c6bd2737', 'a89885f5ab92baf1', 'checkout-service', null)],
  },
  {
    name: 'seed map-form example',
    contentType: 'application/json',
    body: seedBody,
    spans: [span('5b8efff798038103d269b633813fc60c', 'eee19b7ec3c1b174', 'support-bot', { vendor: 'openai', model: 'gpt-4', input: 12, output: 3, messages: SEED_MESSAGES })],
  },
  {
    name: 'langtrace-ts-sdk-1.json',
    contentType: 'application/json',
    body: fixtureBytes('langtrace-ts-sdk-1.json'),
    spans: [span('7b1286681c494310c5e8b3459ea1508e', 'a40ebffecaf29be0', 'checkout-service', { vendor: 'anthropic', model: 'claude-3-haiku', input: null, output: null, messages: sentMessages('langtrace-ts-sdk-1.json') })],
  },
  {
    name: 'langtrace-ts-sdk-2.json',
    contentType: 'application/json',
    body: fixtureBytes('langtrace-ts-sdk-2.json'),
    spans: [span('7b1286681c494310c5e8b3459ea1508e', 'a057b7d7ef547db3', 'checkout-service', null)],
  },
  {
    name: 'langtrace-python-legacy.json',
    contentType: 'application/json',
    body: fixtureBytes('langtrace-python-legacy.json'),
    spans: [
      span('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 'support-bot', { vendor: 'openai', model: 'gpt-4o', input: 14, output: 2, messages: sentMessages('langtrace-python-legacy.json') }),
      span('4bf92f3577b34da6a3ce929d0e0e4736', '53995c3f42cd8ad8', 'support-bot', null),
    ],
  },
]

export const encodings = {
  identity: (body: Buffer) => body,
  gzip: (body: Buffer) => gzipSync(body),
  deflate: (body: Buffer) => deflateSync(body),
} as const

/** `bytes` zero bytes, gzipped as they stream (200 MB of zeros make about 200 KB): a gzip bomb. */
export function gzippedZeros(bytes: number): Promise<Buffer> {
  return gzippedFill(bytes, 0x00)
}

/** A gzip bomb that is JSON as far as it goes: `[` and then spaces, never closed. */
export function gzippedJsonBomb(bytes: number): Promise<Buffer> {
  return gzippedFill(bytes, 0x20, '[')
}

async function gzippedFill(bytes: number, fill: number, head = ''): Promise<Buffer> {
  const gzip = createGzip({ level: 9 })
  const chunks: Buffer[] = []
  gzip.on('data', (chunk: Buffer) => chunks.push(chunk))
  gzip.write(head)
  const filler = Buffer.alloc(1 << 20, fill)
  for (let written = 0; written < bytes; written += filler.length) {
    if (!gzip.write(filler)) await once(gzip, 'drain')
  }
  gzip.end()
  await once(gzip, 'end')
  return Buffer.concat(chunks)
}

/** A Langtrace SDK array of `count` valid spans. */
export function langtraceSpans(count: number): Buffer {
  const spans = Array.from({ length: count }, (_, index) => ({
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: (index + 1).toString(16).padStart(16, '0'),
    name: 'openai.chat.completions.create',
    kind: 2,
    startTime: [1795316906, 0],
    endTime: [1795316907, 0],
    attributes: { 'llm.vendor': 'openai', 'llm.request.model': 'gpt-4o' },
    status: { code: 0 },
  }))
  return Buffer.from(JSON.stringify(spans))
}
