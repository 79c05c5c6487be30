import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SpanInsert } from '@tracewell/db'
import { storeSpans, summariseAll } from '@tracewell/write-path'
import { seedWorkspace, startControlPlane, unauthorized, type TestControlPlane, type Workspace } from './helper.ts'

// Datasets over inject(): creating, adding items (one, many, JSONL, from a trace or a span),
// versions, deleting, downloading, and what is refused with which message.

const llmTrace = 'a1'.repeat(16)
const agentTrace = 'b2'.repeat(16)
const llmSpan = '00000000000000a1'
const rootSpan = '00000000000000b1'
const childSpan = '00000000000000b2'
const t0 = 1_767_225_600_000_000_000n

const s = (stringValue: string) => ({ stringValue })

function span(projectId: string, traceId: string, spanId: string, parentSpanId: string | null, attributes: SpanInsert['attributes']): SpanInsert {
  return {
    projectId, traceId, spanId, parentSpanId, name: `op-${spanId}`, kind: 3,
    startTimeUnixNano: String(t0), endTimeUnixNano: String(t0 + 1_000_000n), durationNs: '1000000',
    traceState: null, statusCode: 0, statusMessage: null, serviceName: 'svc', serviceVersion: null, scopeName: null, scopeVersion: null,
    llmVendor: 'openai', llmModel: 'gpt-4o', llmRequestType: 'chat', inputTokens: 10, outputTokens: 5, totalTokens: 15,
    attributes, resourceAttributes: {}, events: [], links: [],
  }
}

describe('datasets', { timeout: 120_000 }, () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  let datasetId: string
  const send = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, key = ws.projectKey, contentType = 'application/json') =>
    cp.app.inject({
      method,
      url,
      headers: { 'x-api-key': key, ...(payload === undefined ? {} : { 'content-type': contentType }) },
      ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
    })

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
    await storeSpans(cp.db, [
      // An OpenLLMetry chat call.
      span(ws.projectId, llmTrace, llmSpan, null, {
        'gen_ai.prompt.0.role': s('system'), 'gen_ai.prompt.0.content': s('Answer briefly.'),
        'gen_ai.prompt.1.role': s('user'), 'gen_ai.prompt.1.content': s('What is the capital of France?'),
        'gen_ai.completion.0.role': s('assistant'), 'gen_ai.completion.0.content': s('Paris.'),
      }),
      // An agent root with its own input and output, over an OpenInference LLM call.
      span(ws.projectId, agentTrace, rootSpan, null, { 'input.value': s('{"question":"2+2?"}'), 'output.value': s('4') }),
      span(ws.projectId, agentTrace, childSpan, rootSpan, {
        'llm.input_messages.0.message.role': s('user'), 'llm.input_messages.0.message.content': s('Add 2 and 2'),
        'llm.output_messages.0.message.role': s('assistant'), 'llm.output_messages.0.message.content': s('4'),
      }),
    ])
    await summariseAll(cp.db)
  })
  after(() => cp?.close())

  it('creates a dataset at version 0, and lists it only in its project', async () => {
    const created = await send('POST', '/api/datasets', { name: 'capitals', description: 'geography questions', metadata: { owner: 'qa' } })
    assert.equal(created.statusCode, 201, created.body)
    const body = created.json()
    datasetId = body.id
    assert.deepEqual({ ...body, id: undefined, createdAt: undefined, updatedAt: undefined }, {
      id: undefined, createdAt: undefined, updatedAt: undefined, projectId: ws.projectId, name: 'capitals', description: 'geography questions', metadata: { owner: 'qa' }, version: 0, itemCount: 0,
    })
    const twice = await send('POST', '/api/datasets', { name: 'capitals' })
    assert.deepEqual([twice.statusCode, twice.json().message], [409, 'A dataset named "capitals" exists already'])
    assert.deepEqual((await send('GET', '/api/datasets')).json().datasets.map((d: { name: string }) => d.name), ['capitals'])
    assert.deepEqual((await send('GET', '/api/datasets', undefined, other.projectKey)).json(), { datasets: [] })
    assert.equal((await send('GET', `/api/datasets/${datasetId}`, undefined, other.projectKey)).statusCode, 404)
    // A team key names the project.
    assert.equal((await send('GET', `/api/datasets?project_id=${ws.projectId}`, undefined, ws.teamKey)).json().datasets.length, 1)
    const noProject = await send('GET', '/api/datasets', undefined, ws.teamKey)
    assert.deepEqual([noProject.statusCode, noProject.json().message], [400, 'querystring/project_id: required with a team key or a signed-in session'])
    assert.deepEqual((await send('GET', '/api/datasets', undefined, 'tw_proj_wrong')).json(), unauthorized)
  })

  it('adds one item, then many, each change a new version', async () => {
    const one = await send('POST', `/api/datasets/${datasetId}/items`, { id: 'fr', input: { country: 'France' }, expectedOutput: 'Paris', metadata: { difficulty: 'easy' } })
    assert.equal(one.statusCode, 201, one.body)
    assert.equal(one.json().version, 1)
    assert.deepEqual({ ...one.json().items[0], createdAt: undefined }, {
      id: 'fr', datasetId, input: { country: 'France' }, expectedOutput: 'Paris', metadata: { difficulty: 'easy' }, sourceTraceId: null, sourceSpanId: null, validFrom: 1, validTo: null, createdAt: undefined,
    })
    const many = await send('POST', `/api/datasets/${datasetId}/items`, { items: [{ id: 'de', input: { country: 'Germany' }, expectedOutput: 'Berlin' }, { input: { country: 'Italy' } }] })
    assert.equal(many.statusCode, 201, many.body)
    assert.equal(many.json().version, 2)
    const [, italy] = many.json().items
    assert.match(italy.id, /^[0-9a-f-]{36}$/)
    assert.equal(italy.expectedOutput, null)
    const dataset = (await send('GET', `/api/datasets/${datasetId}`)).json()
    assert.deepEqual([dataset.version, dataset.itemCount, dataset.itemsVersion], [2, 3, 2])
    assert.deepEqual(dataset.items.map((item: { id: string }) => item.id), ['fr', 'de', italy.id])
  })

  it('uploads JSONL, replaces an item by id, and keeps every earlier version readable', async () => {
    const jsonl = '{"id":"es","input":{"country":"Spain"},"expectedOutput":"Madrid"}\n\n{"id":"fr","input":{"country":"France"},"expectedOutput":"Paris, France"}\n'
    const uploaded = await send('POST', `/api/datasets/${datasetId}/items`, jsonl, ws.projectKey, 'application/x-ndjson')
    assert.equal(uploaded.statusCode, 201, uploaded.body)
    assert.equal(uploaded.json().version, 3)
    const current = (await send('GET', `/api/datasets/${datasetId}`)).json()
    assert.equal(current.itemCount, 4)
    assert.equal(current.items.find((item: { id: string }) => item.id === 'fr').expectedOutput, 'Paris, France')
    // A replaced item keeps its place; new ones come after the others, in the order sent.
    assert.deepEqual(current.items.map((item: { id: string }) => item.id).filter((id: string) => id.length <= 2), ['fr', 'de', 'es'])
    const v2 = (await send('GET', `/api/datasets/${datasetId}?version=2`)).json()
    assert.deepEqual([v2.itemsVersion, v2.items.length, v2.items.find((item: { id: string }) => item.id === 'fr').expectedOutput], [2, 3, 'Paris'])
    assert.deepEqual((await send('GET', `/api/datasets/${datasetId}?version=1`)).json().items.map((item: { id: string }) => item.id), ['fr'])
    // A page at a time, in the dataset's order, with the version's total.
    const page = (await send('GET', `/api/datasets/${datasetId}?limit=2&offset=1`)).json()
    assert.deepEqual([page.itemsTotal, page.items.map((item: { id: string }) => item.id)], [4, ['de', current.items[2].id]])
    const badPage = await send('GET', `/api/datasets/${datasetId}?limit=0`)
    assert.deepEqual([badPage.statusCode, badPage.json().message], [400, 'querystring/limit: must be >= 1'])
    assert.deepEqual((await send('GET', `/api/datasets/${datasetId}?version=0`)).json().items, [])
    const future = await send('GET', `/api/datasets/${datasetId}?version=9`)
    assert.deepEqual([future.statusCode, future.json().message], [404, 'Dataset version 9 not found: the current version is 3'])
    // application/jsonl is JSONL too.
    const again = await send('POST', `/api/datasets/${datasetId}/items`, '{"id":"pt","input":{"country":"Portugal"}}', ws.projectKey, 'application/jsonl')
    assert.deepEqual([again.statusCode, again.json().version], [201, 4])
  })

  it('deletes an item as a new version, and downloads any version as JSONL', async () => {
    const deleted = await send('DELETE', `/api/datasets/${datasetId}/items/pt`)
    assert.deepEqual([deleted.statusCode, deleted.json()], [200, { version: 5 }])
    const missing = await send('DELETE', `/api/datasets/${datasetId}/items/pt`)
    assert.deepEqual([missing.statusCode, missing.json().message], [404, 'Dataset item not found'])
    const download = await send('GET', `/api/datasets/${datasetId}/items.jsonl`)
    assert.equal(download.statusCode, 200)
    assert.match(download.headers['content-type'] as string, /^application\/x-ndjson/)
    assert.equal(download.headers['content-disposition'], 'attachment; filename="capitals-v5.jsonl"')
    const lines = download.body.trimEnd().split('\n').map((line) => JSON.parse(line))
    assert.deepEqual(lines.map((line) => line.id).sort(), ['de', 'es', 'fr', lines.find((line) => line.input.country === 'Italy').id].sort())
    assert.deepEqual(lines.find((line) => line.id === 'fr'), { id: 'fr', input: { country: 'France' }, expectedOutput: 'Paris, France' })
    const v4 = (await send('GET', `/api/datasets/${datasetId}/items.jsonl?version=4`)).body.trimEnd().split('\n')
    assert.equal(v4.length, 5)
    // What was downloaded uploads as it is into another dataset.
    const copy = (await send('POST', '/api/datasets', { name: 'capitals copy' })).json()
    const reuploaded = await send('POST', `/api/datasets/${copy.id}/items`, download.body, ws.projectKey, 'application/x-ndjson')
    assert.deepEqual([reuploaded.statusCode, reuploaded.json().items.length], [201, 4])
  })

  it('takes an item from a trace or a span: its LLM messages, with the link kept', async () => {
    const fromTrace = await send('POST', `/api/datasets/${datasetId}/items`, { sourceTraceId: llmTrace.toUpperCase() })
    assert.equal(fromTrace.statusCode, 201, fromTrace.body)
    const item = fromTrace.json().items[0]
    assert.deepEqual([item.input, item.expectedOutput, item.sourceTraceId, item.sourceSpanId], [
      [{ role: 'system', content: 'Answer briefly.' }, { role: 'user', content: 'What is the capital of France?' }], 'Paris.', llmTrace, null,
    ])
    const fromSpan = await send('POST', `/api/datasets/${datasetId}/items`, { sourceTraceId: agentTrace, sourceSpanId: childSpan })
    assert.deepEqual(
      [fromSpan.json().items[0].input, fromSpan.json().items[0].expectedOutput, fromSpan.json().items[0].sourceSpanId],
      [[{ role: 'user', content: 'Add 2 and 2' }], '4', childSpan],
    )
    // The root records no messages but its own input and output; the first LLM call's messages come first.
    const fromRoot = await send('POST', `/api/datasets/${datasetId}/items`, { sourceTraceId: agentTrace, sourceSpanId: rootSpan })
    assert.deepEqual([fromRoot.json().items[0].input, fromRoot.json().items[0].expectedOutput], [{ question: '2+2?' }, '4'])
    // What the caller gives wins over what the span records; the link stays.
    const edited = await send('POST', `/api/datasets/${datasetId}/items`, { sourceTraceId: llmTrace, sourceSpanId: llmSpan, input: { country: 'France' }, expectedOutput: null })
    assert.deepEqual([edited.json().items[0].input, edited.json().items[0].expectedOutput, edited.json().items[0].sourceSpanId], [{ country: 'France' }, null, llmSpan])
  })

  it('refuses bad items, naming the item and the field', async () => {
    const url = `/api/datasets/${datasetId}/items`
    const cases: Array<[unknown, string, number, string]> = [
      [{ expectedOutput: 'x' }, 'application/json', 400, 'body: needs an input, or a sourceTraceId to take it from'],
      [{ input: null }, 'application/json', 400, 'body/input: must not be null'],
      [{ input: 1, colour: 'red' }, 'application/json', 400, 'body: must NOT have the property "colour"'],
      [{ items: [{ input: 1 }, { input: 2, metadata: 'x' }] }, 'application/json', 400, 'body/items/1/metadata: must be object'],
      [{ items: [] }, 'application/json', 400, 'body/items: must hold at least one item'],
      [{ items: [{ id: 'a', input: 1 }, { id: 'a', input: 2 }] }, 'application/json', 400, 'body/items/1/id: "a" is given already at body/items/0'],
      [[{ input: 1 }, 'x'], 'application/json', 400, 'body/1: must be an object {input, expectedOutput?, metadata?}'],
      [{ input: 1, id: 'bad id' }, 'application/json', 400, 'body/id: must match pattern "^[A-Za-z0-9_.:-]{1,200}$"'],
      [{ input: 'a\u0000b' }, 'application/json', 400, 'body/input: must not contain the NUL character (\\u0000)'],
      [{ sourceTraceId: 'f'.repeat(32) }, 'application/json', 400, `body/sourceTraceId: no trace ${'f'.repeat(32)} in this project`],
      [{ sourceTraceId: llmTrace, sourceSpanId: 'f'.repeat(16) }, 'application/json', 400, `body/sourceSpanId: no span ${'f'.repeat(16)} in trace ${llmTrace}`],
      [{ input: 1, sourceSpanId: llmSpan }, 'application/json', 400, 'body/sourceSpanId: needs the sourceTraceId of its trace'],
      ['{"input":1}\n\n{"input":', 'application/x-ndjson', 400, 'body line 3: not JSON (Unexpected end of JSON input)'],
      ['{"input":1}\n{"inpt":2}', 'application/x-ndjson', 400, 'body line 2: must NOT have the property "inpt"'],
      ['\n\n', 'application/x-ndjson', 400, 'body: the JSONL upload holds no item'],
    ]
    const before = (await send('GET', `/api/datasets/${datasetId}`)).json().version
    for (const [payload, contentType, status, message] of cases) {
      const response = await send('POST', url, payload, ws.projectKey, contentType)
      assert.deepEqual([response.statusCode, response.json().message], [status, message], JSON.stringify(payload))
    }
    // A trace of another project is not found from here.
    const foreign = await send('POST', `/api/datasets/${datasetId}/items`, { sourceTraceId: llmTrace }, other.projectKey)
    assert.equal(foreign.statusCode, 404)
    // Nothing refused changed the dataset.
    assert.equal((await send('GET', `/api/datasets/${datasetId}`)).json().version, before)
    const text = await send('POST', url, 'input', ws.projectKey, 'text/plain')
    assert.equal(text.statusCode, 415)
  })

  it('deletes a whole dataset, only in its own project', async () => {
    const doomed = (await send('POST', '/api/datasets', { name: 'doomed' })).json()
    assert.equal((await send('POST', `/api/datasets/${doomed.id}/items`, { input: 1 })).statusCode, 201)
    assert.equal((await send('DELETE', `/api/datasets/${doomed.id}`, undefined, other.projectKey)).statusCode, 404)
    assert.equal((await send('DELETE', `/api/datasets/${doomed.id}`)).statusCode, 204)
    assert.equal((await send('GET', `/api/datasets/${doomed.id}`)).statusCode, 404)
    const again = await send('DELETE', `/api/datasets/${doomed.id}`)
    assert.deepEqual([again.statusCode, again.json().message], [404, 'Dataset not found'])
  })

  it('documents every dataset route in the OpenAPI document', async () => {
    const doc = (await cp.app.inject({ url: '/docs/json' })).json()
    for (const [path, method] of [['/api/datasets', 'post'], ['/api/datasets', 'get'], ['/api/datasets/{datasetId}', 'get'], ['/api/datasets/{datasetId}/items', 'post'], ['/api/datasets/{datasetId}/items/{itemId}', 'delete'], ['/api/datasets/{datasetId}/items.jsonl', 'get'], ['/api/datasets/{datasetId}', 'delete']] as const) {
      assert.ok(doc.paths[path]?.[method], `${method} ${path}`)
    }
    assert.ok(doc.paths['/api/datasets/{datasetId}/items'].post.requestBody.content['application/x-ndjson'])
  })
})
