import assert from 'node:assert/strict'
import { createServer, type AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client, credentials, Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js'
import { ExportResultCode, type ExportResult } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc'
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { IngestConfigSchema, loadConfig } from '@tracewell/config'
import { createDb } from '@tracewell/db'
import protobuf from 'protobufjs'
import { testQueuePrefix } from '@tracewell/test-support/queue-prefix'
import { buildApp } from '../src/app.ts'
import { StatusMessage } from '../src/otlp/otlp-status.ts'
import { decodeExportResponse } from '../src/otlp/partial-success.ts'
import { startIngest, testEnv, type IngestHarness } from './support/ingest-harness.ts'
import { nextTraceId, otlpProtobuf, protobufProblem, traceSpans } from './support/otlp-bodies.ts'

// The OTLP/gRPC receiver: the real OpenTelemetry gRPC exporter sends to it as an application
// would, and a bare gRPC client sends what no exporter would (invalid spans) to see each refusal.

const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export'

let ingest: IngestHarness
let grpcPort: number

before(async () => {
  ingest = await startIngest()
  grpcPort = await ingest.app.otlpGrpc.listen({ host: '127.0.0.1', port: 0 })
})
after(async () => {
  await ingest.close()
})

/** Real spans, ended, as an instrumented application's tracer makes them. */
function recordedSpans(names: string[]): ReadableSpan[] {
  const memory = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'grpc-test' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  })
  const tracer = provider.getTracer('grpc-test')
  for (const name of names) tracer.startSpan(name, { attributes: { 'gen_ai.request.model': 'gpt-4o-mini' } }).end()
  return memory.getFinishedSpans()
}

function exportWith(options: { metadata: Record<string, string>; compression?: CompressionAlgorithm; port?: number }, spans: ReadableSpan[]): Promise<ExportResult> {
  const metadata = new Metadata()
  for (const [key, value] of Object.entries(options.metadata)) metadata.set(key, value)
  const exporter = new OTLPTraceExporter({ url: `http://127.0.0.1:${options.port ?? grpcPort}`, metadata, compression: options.compression ?? CompressionAlgorithm.NONE })
  return new Promise<ExportResult>((resolve) => exporter.export(spans, resolve)).finally(() => exporter.shutdown())
}

/** The names of this project's queued spans, for those among `names`. */
async function queuedNames(names: string[]): Promise<string[]> {
  const queued = await ingest.queuedSpans()
  return queued.filter(({ projectId, span }) => projectId === ingest.tenant.projectId && names.includes(span.name)).map(({ span }) => span.name).sort()
}

describe('OTLP/gRPC with the OpenTelemetry exporter', () => {
  for (const [label, compression] of [['plain', CompressionAlgorithm.NONE], ['gzip', CompressionAlgorithm.GZIP]] as const) {
    it(`queues the spans of an export with x-api-key (${label})`, async () => {
      const names = [`grpc ${label} a`, `grpc ${label} b`]
      const result = await exportWith({ metadata: { 'x-api-key': ingest.tenant.projectKey }, compression }, recordedSpans(names))
      assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error))
      assert.deepEqual(await queuedNames(names), names)
    })
  }

  it('accepts the key as Authorization: Bearer', async () => {
    const names = ['grpc bearer']
    const result = await exportWith({ metadata: { authorization: `Bearer ${ingest.tenant.projectKey}` } }, recordedSpans(names))
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error))
    assert.deepEqual(await queuedNames(names), names)
  })

  for (const [label, metadata] of [
    ['a wrong key', () => ({ 'x-api-key': 'tw_proj_not-a-key' })],
    ['no key', () => ({})],
    ['a team key', () => ({ 'x-api-key': ingest.tenant.teamKey })],
  ] as const) {
    it(`refuses ${label} with UNAUTHENTICATED and queues nothing`, async () => {
      const names = [`grpc refused ${label}`]
      const result = await exportWith({ metadata: metadata() }, recordedSpans(names))
      assert.equal(result.code, ExportResultCode.FAILED)
      assert.equal((result.error as ServiceError).code, GrpcStatus.UNAUTHENTICATED)
      assert.equal((result.error as ServiceError).details, 'Invalid API key')
      assert.deepEqual(await queuedNames(names), [])
    })
  }
})

/** A bare unary call to Export with bytes of our making; resolves with the answer or the error. */
function callExport(body: Buffer, key: string, port = grpcPort, shared?: Client): Promise<{ response?: Buffer; error?: ServiceError }> {
  const client = shared ?? new Client(`127.0.0.1:${port}`, credentials.createInsecure())
  const metadata = new Metadata()
  metadata.set('x-api-key', key)
  return new Promise<{ response?: Buffer; error?: ServiceError }>((resolve) => {
    client.makeUnaryRequest(
      EXPORT_PATH,
      (bytes: Buffer) => bytes,
      (bytes: Buffer) => bytes,
      body,
      metadata,
      (error, response) => resolve(error ? { error } : { response: response as Buffer }),
    )
  }).finally(() => shared ?? client.close())
}

const RetryInfo = protobuf.parse(`
  syntax = "proto3";
  message Duration { int64 seconds = 1; int32 nanos = 2; }
  message RetryInfo { Duration retry_delay = 1; }
`).root.lookupType('RetryInfo')

/** The retry delay in seconds a refusal's google.rpc.Status details carry; undefined without one. */
function retryDelaySeconds(error: ServiceError): number | undefined {
  const bytes = error.metadata.get('grpc-status-details-bin')[0]
  if (!(bytes instanceof Buffer)) return undefined
  const status = StatusMessage.decode(bytes) as unknown as { details: Array<{ type_url: string; value: Uint8Array }> }
  const retry = status.details.find((detail) => detail.type_url === 'type.googleapis.com/google.rpc.RetryInfo')
  if (retry === undefined) return undefined
  return Number((RetryInfo.toObject(RetryInfo.decode(retry.value), { longs: Number }) as { retryDelay: { seconds: number } }).retryDelay.seconds)
}

describe('OTLP/gRPC answers', () => {
  it('a full success is an empty ExportTraceServiceResponse', async () => {
    const { response, error } = await callExport(otlpProtobuf(traceSpans(nextTraceId(), 2)), ingest.tenant.projectKey)
    assert.equal(error, undefined)
    assert.equal(response?.length, 0)
  })

  it('partial success: the valid spans are queued, the answer counts and names the refused', async () => {
    const traceId = nextTraceId()
    const { response, error } = await callExport(otlpProtobuf(traceSpans(traceId, 4, [1])), ingest.tenant.projectKey)
    assert.equal(error, undefined)
    assert.deepEqual(decodeExportResponse(response as Buffer), { partialSuccess: { rejectedSpans: 1, errorMessage: `1 of 4 spans rejected: ${protobufProblem(1)}` } })
    const queued = (await ingest.queuedSpans()).filter(({ span }) => span.traceId === traceId).map(({ span }) => span.name)
    assert.deepEqual(queued.sort(), ['step 0', 'step 2', 'step 3'])
  })

  it('INVALID_ARGUMENT, naming the first problem, when no span is valid', async () => {
    const { error } = await callExport(otlpProtobuf(traceSpans(nextTraceId(), 2, [0, 1])), ingest.tenant.projectKey)
    assert.equal(error?.code, GrpcStatus.INVALID_ARGUMENT)
    assert.equal(error?.details, protobufProblem(0))
  })

  it('INVALID_ARGUMENT for bytes that are not an ExportTraceServiceRequest', async () => {
    const { error } = await callExport(Buffer.from('not protobuf at all'), ingest.tenant.projectKey)
    assert.equal(error?.code, GrpcStatus.INVALID_ARGUMENT)
    assert.match(error?.details ?? '', /^body: /)
  })

  it('counts the calls in the ingest metrics under the method name', async () => {
    const metrics = (await ingest.app.inject('/metrics')).body
    const accepted = new RegExp(`tracewell_ingest_requests_total\\{route="${EXPORT_PATH}",format="protobuf",outcome="accepted"\\} ([0-9]+)`).exec(metrics)
    assert.ok(accepted && Number(accepted[1]) >= 5, metrics)
    assert.match(metrics, new RegExp(`tracewell_ingest_requests_total\\{route="${EXPORT_PATH}",format="protobuf",outcome="unauthorized"\\} 3`))
  })
})

describe('OTLP/gRPC limits and outages', () => {
  it('INVALID_ARGUMENT for more spans than MAX_SPANS_PER_REQUEST: the same batch can never be accepted', async () => {
    const small = await startIngest({ MAX_SPANS_PER_REQUEST: '2' })
    try {
      const port = await small.app.otlpGrpc.listen({ host: '127.0.0.1', port: 0 })
      const { error } = await callExport(otlpProtobuf(traceSpans(nextTraceId(), 3)), small.tenant.projectKey, port)
      assert.equal(error?.code, GrpcStatus.INVALID_ARGUMENT)
      assert.equal(error?.details, 'body: 3 spans, more than the 2 accepted in one request (MAX_SPANS_PER_REQUEST)')
    } finally {
      await small.close()
    }
  })

  it('RESOURCE_EXHAUSTED for a message larger than MAX_INFLATED_BYTES', async () => {
    const small = await startIngest({ MAX_INFLATED_BYTES: '1024' })
    try {
      const port = await small.app.otlpGrpc.listen({ host: '127.0.0.1', port: 0 })
      const { error } = await callExport(otlpProtobuf(traceSpans(nextTraceId(), 40)), small.tenant.projectKey, port)
      assert.equal(error?.code, GrpcStatus.RESOURCE_EXHAUSTED)
    } finally {
      await small.close()
    }
  })

  it('RESOURCE_EXHAUSTED with a RetryInfo of 1 s once the backlog is full', async () => {
    const small = await startIngest({ QUEUE_MAX_BACKLOG: '1' })
    try {
      const port = await small.app.otlpGrpc.listen({ host: '127.0.0.1', port: 0 })
      // The producer measures the backlog a few times a second; nothing drains this queue.
      let answer = await callExport(otlpProtobuf(traceSpans(nextTraceId(), 2)), small.tenant.projectKey, port)
      assert.equal(answer.error, undefined)
      const deadline = Date.now() + 5_000
      while (answer.error === undefined && Date.now() < deadline) {
        await sleep(50)
        answer = await callExport(otlpProtobuf(traceSpans(nextTraceId(), 2)), small.tenant.projectKey, port)
      }
      assert.equal(answer.error?.code, GrpcStatus.RESOURCE_EXHAUSTED)
      assert.equal(answer.error?.details, 'Too many spans are waiting to be stored; retry after 1 s')
      assert.equal(retryDelaySeconds(answer.error as ServiceError), 1)
    } finally {
      await small.close()
    }
  })

  it('UNAVAILABLE with a RetryInfo of 5 s when API keys cannot be looked up', async () => {
    const unreachable = 'postgres://postgres@127.0.0.1:1/none'
    const config = loadConfig(IngestConfigSchema, { DATABASE_URL: unreachable, REDIS_URL: testEnv.REDIS_URL, QUEUE_PREFIX: testQueuePrefix('ingest'), LOG_LEVEL: 'silent' })
    const db = createDb({ databaseUrl: unreachable, poolSize: 1 })
    const app = await buildApp(config, { db })
    try {
      const port = await app.otlpGrpc.listen({ host: '127.0.0.1', port: 0 })
      const { error } = await callExport(otlpProtobuf(traceSpans(nextTraceId(), 1)), ingest.tenant.projectKey, port)
      assert.equal(error?.code, GrpcStatus.UNAVAILABLE)
      assert.equal(error?.details, 'API keys cannot be checked right now; retry after 5 s')
      assert.equal(retryDelaySeconds(error as ServiceError), 5)
    } finally {
      await app.close()
      await db.destroy()
    }
  })

  it('a port already in use is an error naming GRPC_PORT', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as AddressInfo
    const other = await startIngest()
    try {
      await assert.rejects(other.app.otlpGrpc.listen({ host: '127.0.0.1', port }), new RegExp(`^Error: OTLP/gRPC cannot listen on 127\\.0\\.0\\.1:${port} \\(GRPC_PORT\\)`))
    } finally {
      await other.close()
      taken.close()
    }
  })
})

describe('OTLP/gRPC on shutdown', () => {
  it('every call answered OK while the app closes has its spans in the queue', async () => {
    const closing = await startIngest()
    try {
      const port = await closing.app.otlpGrpc.listen({ host: '127.0.0.1', port: 0 })
      // One connection, already open, so that the calls below are on the wire at once.
      const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure())
      assert.equal((await callExport(otlpProtobuf(traceSpans(nextTraceId(), 1)), closing.tenant.projectKey, port, client)).error, undefined)
      const traceIds = Array.from({ length: 20 }, () => nextTraceId())
      // Bodies large enough that decoding them all takes a while: closing begins with some calls
      // answered, some being decoded or queued, and perhaps some not yet read (those are refused
      // with UNAVAILABLE, which exporters retry).
      const calls = traceIds.map((traceId) => callExport(otlpProtobuf(traceSpans(traceId, 2_000)), closing.tenant.projectKey, port, client))
      await sleep(50)
      // close() obliterates nothing: the harness's own close does that, after the check below.
      await closing.app.close()
      const answers = await Promise.all(calls)
      const queuedTraces = new Set((await closing.queuedSpans()).map(({ span }) => span.traceId))
      const accepted = traceIds.filter((_, i) => answers[i]?.error === undefined)
      assert.ok(accepted.length > 0, `calls in progress when closing began were finished: ${JSON.stringify(answers.map((a) => a.error?.code ?? 'ok'))} ${answers[0]?.error?.details}`)
      for (const traceId of accepted) assert.ok(queuedTraces.has(traceId), `trace ${traceId} was answered OK but is not queued`)
      for (const answer of answers) if (answer.error) assert.equal(answer.error.code, GrpcStatus.UNAVAILABLE, answer.error.details)
      client.close()
    } finally {
      await closing.close().catch(() => {})
    }
  })
})
