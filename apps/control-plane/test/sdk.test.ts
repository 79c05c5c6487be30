import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { getPromptFromRegistry } from '@langtrase/typescript-sdk'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// The real clients against the running service: the Langtrace TypeScript SDK's own function, and
// the request the Python SDK builds (urlencode of promptset_id, version and variables.<name>).

describe('Langtrace SDK compatibility of GET /api/promptset', () => {
  let cp: TestControlPlane
  let ws: Workspace
  let baseUrl: string
  let promptsetId: string

  before(async () => {
    cp = await startControlPlane()
    ws = await seedWorkspace(cp.db)
    await cp.app.listen({ port: 0, host: '127.0.0.1' })
    baseUrl = `http://127.0.0.1:${(cp.app.server.address() as AddressInfo).port}`
    const headers = { 'x-api-key': ws.projectKey }
    promptsetId = (await cp.app.inject({ method: 'POST', url: '/api/promptsets', headers, payload: { name: 'support' } })).json().id
    for (const payload of [
      { value: 'You are a helpful assistant.', model: 'gpt-4o' },
      { value: 'Answer ${customer} about {{ topic }} in {language}.', model: 'gpt-4o-mini', modelSettings: { temperature: 0.1 }, tags: ['support'], note: 'second', live: true },
    ]) {
      assert.equal((await cp.app.inject({ method: 'POST', url: `/api/promptsets/${promptsetId}/prompts`, headers, payload })).statusCode, 201)
    }
    // How the SDK finds the service (it reads these on every call).
    process.env.LANGTRACE_API_HOST = baseUrl
    process.env.LANGTRACE_API_KEY = ws.projectKey
  })
  after(() => cp.close())

  it('TypeScript SDK: fetches the live prompt', async () => {
    const prompt = await getPromptFromRegistry(promptsetId)
    assert.equal(prompt.version, 2)
    assert.equal(prompt.live, true)
    assert.equal(prompt.value, 'Answer ${customer} about {{ topic }} in {language}.')
    assert.deepEqual(prompt.variables, ['customer', 'topic', 'language'])
    assert.deepEqual(prompt.modelSettings, { temperature: 0.1 })
  })

  it('TypeScript SDK: fetches a given version', async () => {
    const prompt = await getPromptFromRegistry(promptsetId, { prompt_version: 1 })
    assert.deepEqual([prompt.version, prompt.live, prompt.value, prompt.model], [1, false, 'You are a helpful assistant.', 'gpt-4o'])
  })

  it('TypeScript SDK: fetches a filled prompt, values with spaces, +, &, % and unicode intact', async () => {
    const prompt = await getPromptFromRegistry(promptsetId, {
      variables: { customer: 'Zoë & Co + 100%', topic: 'refunds=yes?', language: 'Français 🇫🇷' },
    })
    assert.equal(prompt.value, 'Answer Zoë & Co + 100% about refunds=yes? in Français 🇫🇷.')
  })

  it('TypeScript SDK: a missing variable is an error the SDK surfaces', async () => {
    await assert.rejects(getPromptFromRegistry(promptsetId, { variables: { customer: 'x' } }), /An error occured when trying to get the prompt from registry/)
  })

  it('Python SDK request shape: prompts[0] with every field', async () => {
    // urllib.parse.urlencode({'promptset_id': id, 'version': 2, 'variables.customer': 'Jürgen Müller', …}):
    // quote_plus, so a space is '+', and UTF-8 percent escapes.
    const query = `promptset_id=${promptsetId}&version=2&variables.customer=J%C3%BCrgen+M%C3%BCller&variables.topic=a%2Bb+%26+c&variables.language=English`
    const response = await fetch(`${baseUrl}/api/promptset?${query}`, { headers: { 'x-api-key': ws.projectKey, 'user-agent': 'python-requests/2.32.3' } })
    assert.equal(response.status, 200)
    const prompt = ((await response.json()) as { prompts: Record<string, unknown>[] }).prompts[0] as Record<string, unknown>
    for (const field of ['id', 'value', 'variables', 'model', 'modelSettings', 'version', 'live', 'tags', 'spanId', 'note', 'promptsetId', 'createdAt', 'updatedAt']) {
      assert.ok(field in prompt, field)
    }
    assert.deepEqual({ ...prompt, id: undefined, createdAt: undefined, updatedAt: undefined }, {
      id: undefined,
      value: 'Answer Jürgen Müller about a+b & c in English.',
      variables: ['customer', 'topic', 'language'],
      model: 'gpt-4o-mini',
      modelSettings: { temperature: 0.1 },
      version: 2,
      live: true,
      tags: ['support'],
      spanId: null,
      note: 'second',
      promptsetId: promptsetId,
      createdAt: undefined,
      updatedAt: undefined,
    })
  })
})
