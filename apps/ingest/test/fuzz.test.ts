import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { deflateSync, gzipSync } from 'node:zlib'
import { seededRandom } from '@tracewell/test-support'
import { clientBodies, gzippedZeros, langtraceSpans } from './support/fixtures.ts'
import { startIngest, type IngestHarness } from './support/ingest-harness.ts'
import { StatusMessage } from '../src/otlp/otlp-status.ts'
import { decodeExportResponse } from '../src/otlp/partial-success.ts'

// Thousands of random and mutated bodies: every answer is a client error or a success, never a
// 5xx and never a crash. The PRNG is seeded (change SEED to explore), so a failure reproduces.

const SEED = 20261122
const ROUNDS = 3_000

const random = seededRandom(SEED)
const int = (below: number) => Math.floor(random() * below)
const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T

function randomBytes(length: number): Buffer {
  const bytes = Buffer.alloc(length)
  for (let i = 0; i < length; i++) bytes[i] = int(256)
  return bytes
}

const weirdValues: unknown[] = [
  null, true, false, 0, -1, 1e308, -1e308, 2 ** 64, Number.MAX_SAFE_INTEGER + 2, 0.5, '', 'x', '0x', '0'.repeat(32), 'F'.repeat(32),
  'zz'.repeat(8), '\u0000', '\ud800', [], {}, [[]], { stringValue: 1 }, { intValue: '1e3' }, { intValue: '99999999999999999999999' },
  { doubleValue: 'NaN' }, { arrayValue: { values: [{}] } }, { kvlistValue: { values: [{ key: 1 }] } }, { bytesValue: '@@@' }, '[1e400]',
  'SpanKind.NOPE', [1, 2, 3], ['a', 'b'], '2024-13-45T99:99:99Z',
]

/** A JSON value with random structure and random types in random places. */
function randomJson(depth: number): unknown {
  if (depth <= 0 || random() < 0.3) return pick(weirdValues)
  if (random() < 0.5) return Array.from({ length: int(4) }, () => randomJson(depth - 1))
  const keys = ['resourceSpans', 'scopeSpans', 'spans', 'resource', 'attributes', 'traceId', 'spanId', 'name', 'kind', 'startTimeUnixNano', 'endTimeUnixNano', 'startTime', 'endTime', 'context', 'status', 'events', 'links', 'value', 'key', 'stringValue', 'arrayValue', 'values']
  return Object.fromEntries(Array.from({ length: int(5) }, () => [pick(keys), randomJson(depth - 1)]))
}

/** A valid body with one field replaced somewhere by a random value. */
function mutateJsonValue(body: unknown): unknown {
  const copy = structuredClone(body) as unknown
  let node = copy
  for (let steps = int(8); steps > 0; steps--) {
    if (typeof node !== 'object' || node === null) break
    const keys = Object.keys(node)
    if (keys.length === 0) break
    const key = pick(keys)
    const child = (node as Record<string, unknown>)[key]
    if (typeof child !== 'object' || child === null || random() < 0.2) {
      ;(node as Record<string, unknown>)[key] = random() < 0.5 ? pick(weirdValues) : randomJson(3)
      return copy
    }
    node = child
  }
  return random() < 0.5 ? copy : randomJson(4)
}

function mutateBytes(body: Buffer): Buffer {
  const bytes = Buffer.from(body)
  switch (int(5)) {
    case 0: // truncate
      return bytes.subarray(0, int(bytes.length))
    case 1: // flip bytes
      for (let flips = 1 + int(8); flips > 0; flips--) bytes[int(bytes.length)] = int(256)
      return bytes
    case 2: // insert garbage
    {
      const at = int(bytes.length)
      return Buffer.concat([bytes.subarray(0, at), randomBytes(1 + int(16)), bytes.subarray(at)])
    }
    case 3: // duplicate a slice
    {
      const at = int(bytes.length)
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(int(at + 1)), bytes.subarray(at)])
    }
    default: // drop a slice
    {
      const at = int(bytes.length)
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + int(32))])
    }
  }
}

interface FuzzCase {
  kind: string
  contentType: string
  encoding?: string
  body: Buffer
}

const jsonBodies = clientBodies.filter((body) => body.contentType === 'application/json')
const protobufBodies = clientBodies.filter((body) => body.contentType !== 'application/json')
let bomb: Buffer

function nextCase(): FuzzCase {
  const json = 'application/json'
  const proto = 'application/x-protobuf'
  switch (int(12)) {
    case 0:
      return { kind: 'random bytes', contentType: pick([json, proto]), body: randomBytes(int(512)) }
    case 1:
      return { kind: 'mutated json bytes', contentType: json, body: mutateBytes(pick(jsonBodies).body) }
    case 2:
      return { kind: 'mutated protobuf bytes', contentType: proto, body: mutateBytes(pick(protobufBodies).body) }
    case 3:
      return { kind: 'mutated json value', contentType: json, body: Buffer.from(JSON.stringify(mutateJsonValue(JSON.parse(pick(jsonBodies).body.toString('utf8'))))) }
    case 4:
      return { kind: 'random json', contentType: json, body: Buffer.from(JSON.stringify(randomJson(6)) ?? 'null') }
    case 5: {
      const depth = pick([1_000, 10_000, 100_000])
      const opener = pick(['[', '{"a":', '[{"arrayValue":{"values":'])
      const body = opener.repeat(depth) + (random() < 0.5 ? '' : '1')
      return { kind: `nesting ${depth}`, contentType: json, body: Buffer.from(body) }
    }
    case 6: {
      const body = Buffer.from(pick(jsonBodies).body)
      body[int(body.length)] = pick([0x80, 0xc3, 0xed, 0xff, 0xf8])
      return { kind: 'invalid utf-8', contentType: json, body }
    }
    case 7: {
      const body = pick(clientBodies)
      const [encoding, encode] = pick([
        ['gzip', (b: Buffer) => deflateSync(b)],
        ['deflate', (b: Buffer) => gzipSync(b)],
        ['identity', (b: Buffer) => gzipSync(b)],
        ['gzip', (b: Buffer) => b],
        ['gzip', (b: Buffer) => mutateBytes(gzipSync(b))],
        ['deflate', (b: Buffer) => mutateBytes(deflateSync(b))],
        [pick(['br', 'zstd', 'compress', 'gzip, br', 'x']), (b: Buffer) => b],
      ] as const)
      return { kind: `wrong encoding ${encoding}`, contentType: body.contentType, encoding, body: encode(body.body) }
    }
    case 8:
      return { kind: 'gzip bomb', contentType: pick([json, proto]), encoding: 'gzip', body: bomb }
    case 9:
      return { kind: 'huge numbers', contentType: json, body: Buffer.from(pick(jsonBodies).body.toString('utf8').replace(/\d{6,}/g, () => pick(['1e400', '-1', '99999999999999999999999999', '1.5', '0']))) }
    case 10:
      return { kind: 'wrong content type', contentType: pick(['text/plain', 'application/xml', 'application/jsonx', 'multipart/form-data', '', 'application/json-patch+json']), body: pick(clientBodies).body }
    default:
      return { kind: 'too many spans', contentType: json, body: langtraceSpans(11 + int(20)) }
  }
}

let ingest: IngestHarness
before(async () => {
  ingest = await startIngest({ MAX_BODY_BYTES: String(1 << 20), MAX_INFLATED_BYTES: String(2 << 20), MAX_SPANS_PER_REQUEST: '10' })
  bomb = await gzippedZeros(50 * 1024 * 1024)
})
after(async () => {
  await ingest.close()
})

it(`${ROUNDS} random and mutated bodies get 4xx or 200, never 5xx (seed ${SEED})`, async () => {
  const statuses = new Map<number, number>()
  for (let round = 0; round < ROUNDS; round++) {
    const fuzz = nextCase()
    const url = random() < 0.5 ? '/api/trace' : '/v1/traces'
    const headers: Record<string, string> = { 'x-api-key': ingest.tenant.projectKey, 'content-type': fuzz.contentType }
    if (fuzz.encoding) headers['content-encoding'] = fuzz.encoding
    const response = await ingest.app.inject({ method: 'POST', url, headers, payload: fuzz.body })
    const where = `round ${round} (${fuzz.kind}, ${url}, seed ${SEED}): ${response.statusCode} ${response.body.slice(0, 300)}`
    assert.ok(response.statusCode === 200 || (response.statusCode >= 400 && response.statusCode < 500), where)
    if (url === '/api/trace' && !String(response.headers['content-type']).startsWith('application/x-protobuf')) {
      const body = response.json<{ status: number; message: string }>()
      assert.equal(body.status, response.statusCode, where)
      assert.equal(typeof body.message, 'string', where)
    }
    // A protobuf request is answered in protobuf: a Status that decodes, or a response that does.
    if (fuzz.contentType.includes('protobuf') && response.statusCode !== 415) {
      assert.equal(response.headers['content-type'], 'application/x-protobuf', where)
      if (response.statusCode >= 400) assert.equal(typeof StatusMessage.decode(response.rawPayload).toJSON().message, 'string', where)
      else decodeExportResponse(response.rawPayload)
    }
    statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
  }
  // The fuzzer reaches every kind of answer, or it is not testing much.
  for (const status of [200, 400, 413, 415]) assert.ok((statuses.get(status) ?? 0) > 0, `no ${status} in ${JSON.stringify([...statuses])}`)
  const health = await ingest.app.inject('/healthz')
  assert.equal(health.statusCode, 200)
})
