import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { permissions, type Permission } from '@tracewell/policy'
import type { FastifyRequest } from 'fastify'
import { auditedChange } from '../src/audit/audited-changes.ts'
import { changedParts } from '../src/audit/changed-parts.ts'
import { withoutSecrets } from '../src/audit/secret-fields.ts'

// What the audit log records, decided from a route's permission and method alone, for every
// permission of the matrix (a permission added later is recorded unless it is a read).

const requestFor = (method: string, config: Record<string, unknown>, url = '/api/x/:id') =>
  ({ method, routeOptions: { config, url } }) as unknown as FastifyRequest

describe('audited changes', () => {
  it('records every change but reads and the work itself; settings with before and after', () => {
    const recorded: string[] = []
    const snapshotted: string[] = []
    for (const permission of Object.keys(permissions) as Permission[]) {
      assert.equal(auditedChange(requestFor('GET', { permission })), null, `GET ${permission}`)
      const change = auditedChange(requestFor('POST', { permission }))
      if (change === null) continue
      recorded.push(permission)
      if (change.snapshot) snapshotted.push(permission)
      assert.equal(change.resourceType, permission.split(':')[0])
    }
    assert.deepEqual(snapshotted.sort(), ['members:manage', 'settings:write', 'sso:write'])
    const unrecorded = (Object.keys(permissions) as Permission[]).filter((permission) => !recorded.includes(permission) && !permission.endsWith(':read'))
    assert.deepEqual(unrecorded.sort(), ['annotation-queues:write', 'comments:write', 'feedback:write', 'playground:run', 'scores:write', 'traces:ingest', 'views:write'])
    // What issue 44 §5 names is all recorded.
    for (const permission of ['members:manage', 'sso:write', 'keys:manage', 'team-keys:manage', 'settings:write', 'prompts:write', 'prompts:label-production', 'evaluators:write', 'llm-connections:write', 'traces:delete', 'datasets:write', 'experiments:write', 'project:delete', 'team:delete']) {
      assert.ok(recorded.includes(permission), permission)
    }
  })

  it('records an open route only when it asks to, and never one that opts out', () => {
    assert.equal(auditedChange(requestFor('POST', { permission: 'signed-in' })), null)
    assert.deepEqual(auditedChange(requestFor('POST', { permission: 'anyone', audit: true }, '/api/invitations/:token/accept')), { permission: 'anyone', resourceType: 'invitations', snapshot: false })
    assert.equal(auditedChange(requestFor('PUT', { permission: 'settings:write', audit: false })), null)
    assert.equal(auditedChange(requestFor('DELETE', {})), null)
  })

  it('keeps only what differs: fields of an object, items of a list by their id', () => {
    assert.equal(changedParts({ a: 1 }, { a: 1 }), null)
    assert.deepEqual(changedParts({ a: 1, b: { c: 2, d: 3 }, e: 5 }, { a: 1, b: { c: 2, d: 4 }, f: 6 }), { before: { b: { d: 3 }, e: 5 }, after: { b: { d: 4 }, f: 6 } })
    const list = (items: object[]) => ({ members: items })
    assert.deepEqual(
      changedParts(list([{ userId: 'u1', role: 'member' }, { userId: 'u2', role: 'viewer' }]), list([{ userId: 'u1', role: 'admin' }, { userId: 'u2', role: 'viewer' }, { userId: 'u3', role: 'viewer' }])),
      { before: list([{ userId: 'u1', role: 'member' }]), after: list([{ userId: 'u1', role: 'admin' }, { userId: 'u3', role: 'viewer' }]) },
    )
    // Without ids to match them by, a list that changed is kept whole.
    assert.deepEqual(changedParts(['a', 'b'], ['a', 'c']), { before: ['a', 'b'], after: ['a', 'c'] })
    assert.deepEqual(changedParts(null, { enabled: true }), { before: null, after: { enabled: true } })
  })

  it('never keeps a secret', () => {
    assert.deepEqual(
      withoutSecrets({ clientSecret: 's', password: 'p', nested: [{ apiKey: 'k', accessToken: 't', url: 'https://x/invite/tok' }], usdPerMillionTokens: { input: 1 }, metadataUrl: 'https://idp' }),
      { clientSecret: '[redacted]', password: '[redacted]', nested: [{ apiKey: '[redacted]', accessToken: '[redacted]', url: '[redacted]' }], usdPerMillionTokens: { input: 1 }, metadataUrl: 'https://idp' },
    )
  })
})
