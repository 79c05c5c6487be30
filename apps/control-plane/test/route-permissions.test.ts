import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { keyAllows, permissions, roleAllows, teamKeyAllows, isPermission, type KeyScope, type Permission, type ProjectRole, type TeamRole } from '@tracewell/policy'
import Fastify from 'fastify'
import { authorize } from '../src/accounts/authorize.ts'
import { requireRoutePermissions } from '../src/accounts/route-permissions.ts'
import { mintApiKey } from '../src/mint-api-key.ts'
import { addPerson, csrf, signIn } from './people.helper.ts'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// The route walk (issue 44 §2): every operation of the OpenAPI document, called by each role of
// a team, by people whose project role overrides theirs, by a person and a key of another team,
// and by keys of each scope, answers as @tracewell/policy's matrix says: allowed → neither 401
// nor 403; denied → 403; another team's resource (or a project hidden from the caller) → 404.
// Expectations come from the policy module and each route's published x-permission, so a route
// added without a permission fails here (and the app refuses to start).

type Expectation = 'allowed' | 403 | 404 | 401

interface Caller {
  name: string
  headers: Record<string, string>
  expect(access: string, on: 'team' | 'project' | undefined): Expectation
}

interface Operation {
  method: string
  path: string
  access: string
  takesProjectId: boolean
}

const secret = 'route-walk-session-secret-0123456789abcdef'

describe('every route answers as the permission matrix says', () => {
  let cp: TestControlPlane
  let a: Workspace
  let b: Workspace
  const callers: Caller[] = []
  let operations: Operation[] = []

  before(async () => {
    cp = await startControlPlane({ SESSION_SECRET: secret })
    a = await seedWorkspace(cp.db, 'A')
    b = await seedWorkspace(cp.db, 'B')

    const asPerson = (name: string, cookie: string, teamRole: TeamRole, projectRole?: ProjectRole): Caller => ({
      name,
      headers: { cookie, ...csrf },
      expect(access, on) {
        if (access === 'signed-in') return 'allowed'
        const permission = access as Permission
        const role = on === 'project' ? (projectRole ?? teamRole) : teamRole
        if (role === 'none') return 404
        return roleAllows(role, permission) ? 'allowed' : 403
      },
    })
    for (const role of ['viewer', 'member', 'admin', 'owner'] as const) {
      await addPerson(cp.db, a.teamId, role, `${role}@a.example`)
      callers.push(asPerson(role, await signIn(cp.app, `${role}@a.example`), role))
    }
    await addPerson(cp.db, a.teamId, 'member', 'hidden@a.example', { projectRoles: { [a.projectId]: 'none' } })
    callers.push(asPerson('member with the project hidden', await signIn(cp.app, 'hidden@a.example'), 'member', 'none'))
    await addPerson(cp.db, a.teamId, 'viewer', 'raised@a.example', { projectRoles: { [a.projectId]: 'admin' } })
    callers.push(asPerson('viewer made admin of the project', await signIn(cp.app, 'raised@a.example'), 'viewer', 'admin'))

    // Another team's owner, naming team A as the console's team switcher would.
    await addPerson(cp.db, b.teamId, 'owner', 'owner@b.example')
    const outsider = await signIn(cp.app, 'owner@b.example')
    callers.push({ name: 'owner of another team', headers: { cookie: outsider, ...csrf, 'x-tracewell-team': a.teamId }, expect: (access) => (access === 'signed-in' ? 'allowed' : 404) })

    callers.push({
      name: 'team key',
      headers: { 'x-api-key': a.teamKey },
      expect: (access) => (access === 'signed-in' ? 403 : teamKeyAllows(access as Permission) ? 'allowed' : 403),
    })
    callers.push({ name: 'another team’s key', headers: { 'x-api-key': b.teamKey, 'x-tracewell-team': a.teamId }, expect: (access) => (access === 'signed-in' ? 403 : 404) })
    const projectKey = (name: string, key: string, scopes: readonly KeyScope[] | null): Caller => ({
      name,
      headers: { 'x-api-key': key },
      expect(access, on) {
        if (access === 'signed-in' || on === 'team') return 403
        return keyAllows(scopes, access as Permission) ? 'allowed' : 403
      },
    })
    callers.push(projectKey('project key made before scopes', a.projectKey, null))
    for (const scopes of [['ingest'], ['read'], ['write'], ['ingest', 'read']] as KeyScope[][]) {
      const { secret: key } = await mintApiKey(cp.db, 'project', { teamId: a.teamId, projectId: a.projectId }, undefined, { scopes })
      callers.push(projectKey(`project key with ${scopes.join(',')}`, key, scopes))
    }

    const document = (await cp.app.inject({ url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, { 'x-permission'?: string; parameters?: { in: string; name: string }[] }>>
    }
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => {
        const access = operation['x-permission']
        assert.ok(access, `${method.toUpperCase()} ${path} publishes no x-permission`)
        // A rule choosing between permissions names the one for a request that names a project first.
        const first = access.split(' | ')[0] as string
        return { method: method.toUpperCase(), path, access: first, takesProjectId: (operation.parameters ?? []).some((parameter) => parameter.in === 'query' && parameter.name === 'project_id') }
      }),
    )
  })
  after(() => cp.close())

  it('publishes a permission of the matrix (or an open access) for every operation', () => {
    assert.ok(operations.length > 100, `${operations.length} operations`)
    for (const { method, path, access } of operations) {
      assert.ok(isPermission(access) || ['anyone', 'signed-in', 'admin-key'].includes(access), `${method} ${path}: ${access} is neither a permission nor an open access`)
    }
  })

  it('admits, refuses (403) and hides (404) every judged route per the matrix', async () => {
    const mismatches: string[] = []
    let calls = 0
    // Leaving the team goes last: whoever it admits is no longer in the team for the routes after it.
    const leavingLast = [...operations].sort((x, y) => Number(x.path.endsWith('/leave')) - Number(y.path.endsWith('/leave')))
    for (const operation of leavingLast) {
      if (operation.access === 'anyone') continue
      const url = urlOf(operation, a)
      const on = isPermission(operation.access) ? permissions[operation.access].on : undefined
      for (const caller of callers) {
        const expected: Expectation = operation.access === 'admin-key' ? 401 : caller.expect(operation.access, on)
        const response = await cp.app.inject({ method: operation.method as 'GET', url, headers: caller.headers })
        calls++
        const status = response.statusCode
        const matches = expected === 'allowed' ? status !== 401 && status !== 403 : status === expected
        if (!matches) mismatches.push(`${operation.method} ${url} (${operation.access}) as ${caller.name}: expected ${expected}, got ${status} ${response.body.slice(0, 160)}`)
      }
    }
    assert.deepEqual(mismatches, [], `${mismatches.length} of ${calls} calls answered against the matrix`)
  })
})

/** The operation's URL with its path parameters filled (the project is A's) and ?project_id= where it takes one. */
function urlOf(operation: Operation, a: Workspace): string {
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === 'projectId') return a.projectId
    if (name === 'teamId') return a.teamId
    // Any other label than production: that one needs prompts:label-production.
    if (name === 'label') return 'staging'
    return 'absent-id'
  })
  return operation.takesProjectId && !operation.path.includes('{projectId}') ? `${path}?project_id=${a.projectId}` : path
}

describe('a route without a permission', () => {
  it('stops the app from starting', async () => {
    const app = Fastify()
    requireRoutePermissions(app, false)
    await assert.rejects(async () => {
      app.get('/forgot', async () => 'open')
      await app.ready()
    }, /GET \/forgot: states no config\.permission/)
  })

  it('with a permission but without the authorize hook, stops it too', async () => {
    const app = Fastify()
    requireRoutePermissions(app, false)
    await assert.rejects(async () => {
      app.get('/unjudged', { config: { permission: 'traces:read' } }, async () => 'open')
      await app.ready()
    }, /GET \/unjudged: has config\.permission but is not judged by onRequest: authorize/)
  })

  it('is judged when it has both', async () => {
    const app = Fastify()
    requireRoutePermissions(app, false)
    app.get('/judged', { onRequest: authorize, config: { permission: 'traces:read' } }, async () => 'open')
    await app.ready()
    await app.close()
  })
})
