import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { callJson } from '../src/api-client.ts'
import { chatAttributes, otlpTracerProvider } from '../src/otel-clients.ts'
import { eventually, freePort, startService, type RunningService } from '../src/processes.ts'
import { promtoolComplaints } from '../src/promtool.ts'
import { redoclyProblems } from '../src/redocly.ts'

// `npm start` on embedded defaults: no DATABASE_URL, no REDIS_URL. The first start prints the
// keys; a real OpenTelemetry exporter sends with them and the trace reads back.

describe('npm start on embedded defaults', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-e2e-'))
  let service: RunningService | undefined
  after(async () => {
    await service?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('prints usable keys on first start and stores what real exporters send, over HTTP and gRPC', async () => {
    service = await startService('all-in-one', 'apps/all-in-one/src/server.ts', { DATA_DIR: dataDir, PORT: String(await freePort()) })
    const projectKey = await eventually(async () => /Project API key:\s+(\S+)/.exec(service!.output())?.[1], 10_000, 'the first-start banner')
    const teamKey = /Team API key:\s+(\S+)/.exec(service.output())?.[1]
    assert.match(projectKey, /^tw_proj_/)
    assert.match(teamKey ?? '', /^tw_team_/)

    const provider = otlpTracerProvider({ url: `${service.url}/api/trace`, apiKey: projectKey, encoding: 'json', serviceName: 'quickstart' })
    const span = provider.getTracer('e2e').startSpan('openai.chat', { attributes: chatAttributes('gpt-4o-mini') })
    span.end()
    await provider.forceFlush()
    await provider.shutdown()

    const stored = await callJson<{ spans: Array<{ llmModel: string; serviceName: string }> }>(`${service.url}/api/traces/${span.spanContext().traceId}`, { headers: { 'x-api-key': projectKey } })
    assert.equal(stored.status, 200)
    assert.equal(stored.body.spans[0]?.llmModel, 'gpt-4o-mini')
    assert.equal(stored.body.spans[0]?.serviceName, 'quickstart')

    // The same process receives OTLP/gRPC; without Redis it answers once the spans are stored.
    const grpc = otlpTracerProvider({ url: `http://${service.grpcAddress}`, apiKey: projectKey, encoding: 'grpc', serviceName: 'quickstart-grpc' })
    const grpcSpan = grpc.getTracer('e2e').startSpan('openai.chat', { attributes: chatAttributes('gpt-4o') })
    grpcSpan.end()
    await grpc.forceFlush()
    await grpc.shutdown()
    const viaGrpc = await callJson<{ spans: Array<{ llmModel: string; serviceName: string }> }>(`${service.url}/api/traces/${grpcSpan.spanContext().traceId}`, { headers: { 'x-api-key': projectKey } })
    assert.equal(viaGrpc.status, 200)
    assert.equal(viaGrpc.body.spans[0]?.llmModel, 'gpt-4o')
    assert.equal(viaGrpc.body.spans[0]?.serviceName, 'quickstart-grpc')

    // One process, every service's metrics in one registry: promtool still accepts them.
    assert.deepEqual(promtoolComplaints(await (await fetch(`${service.url}/metrics`)).text()), [])
    // And one OpenAPI document for every service's routes.
    assert.equal(redoclyProblems(await (await fetch(`${service.url}/docs/json`)).text()), null)

    const projects = await callJson<{ projects: unknown[] }>(`${service.url}/api/projects`, { headers: { 'x-api-key': teamKey! } })
    assert.equal(projects.body.projects.length, 1)
  })
})
