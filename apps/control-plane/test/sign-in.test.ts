import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { addPerson, csrf, signIn, testPassword } from './people.helper.ts'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

// Signing in with an email and password, and a person's own account (issue 44 §1, docs/accounts.md).

describe('people: sign-in, sign-out and their own account', () => {
  let cp: TestControlPlane
  let ws: Workspace

  before(async () => {
    cp = await startControlPlane({ SESSION_SECRET: 'sign-in-session-secret-0123456789abcdef' })
    ws = await seedWorkspace(cp.db, 'Acme')
    await addPerson(cp.db, ws.teamId, 'member', 'Mia@Acme.example', { projectRoles: { [ws.projectId]: 'viewer' } })
  })
  after(() => cp.close())

  const signInWith = (payload: object, headers: Record<string, string> = csrf, remoteAddress = '10.0.0.1') =>
    cp.app.inject({ method: 'POST', url: '/api/auth/sign-in', headers, payload, remoteAddress })

  it('signs in (email in any case) with an HttpOnly SameSite=Lax cookie and answers who and where', async () => {
    const response = await signInWith({ email: 'mia@ACME.example', password: testPassword })
    assert.equal(response.statusCode, 200, response.body)
    const cookie = response.cookies.find((candidate) => candidate.name === 'tw_sid')
    assert.deepEqual([cookie?.httpOnly, cookie?.sameSite, cookie?.path], [true, 'Lax', '/'])
    assert.equal(response.headers['cache-control'], 'no-store')
    const body = response.json()
    assert.deepEqual(Object.keys(body.user).sort(), ['email', 'id', 'name'])
    assert.deepEqual(
      body.teams.map((team: { name: string; role: string }) => [team.name, team.role]),
      [['Acme', 'member']],
    )
    assert.deepEqual(body.teams[0].projects, [{ id: ws.projectId, name: 'Acme project', role: 'viewer' }])
    const me = await cp.app.inject({ url: '/api/me', headers: { cookie: `tw_sid=${cookie?.value}` } })
    assert.deepEqual(me.json(), body)
  })

  it('answers an unknown email and a wrong password alike, and refuses without the CSRF header', async () => {
    const unknown = await signInWith({ email: 'nobody@acme.example', password: testPassword }, csrf, '10.0.0.2')
    const wrong = await signInWith({ email: 'mia@acme.example', password: 'wrong password, long enough' }, csrf, '10.0.0.2')
    assert.deepEqual([unknown.statusCode, unknown.json()], [401, { message: 'Wrong email or password' }])
    assert.deepEqual([wrong.statusCode, wrong.json()], [401, { message: 'Wrong email or password' }])
    assert.equal(unknown.headers['set-cookie'], undefined)
    const noCsrf = await signInWith({ email: 'mia@acme.example', password: testPassword }, {})
    assert.equal(noCsrf.statusCode, 403)
    const missing = await signInWith({ email: 'mia@acme.example' })
    assert.equal(missing.statusCode, 400)
    assert.match(missing.json().message, /password/)
  })

  it('signs out on the server: the cookie replayed afterwards is refused', async () => {
    const cookie = await signIn(cp.app, 'mia@acme.example')
    assert.equal((await cp.app.inject({ url: '/api/me', headers: { cookie } })).statusCode, 200)
    const out = await cp.app.inject({ method: 'POST', url: '/api/auth/sign-out', headers: { cookie, ...csrf } })
    assert.equal(out.statusCode, 204)
    assert.match(String(out.headers['set-cookie']), /tw_sid=;/)
    const replayed = await cp.app.inject({ url: '/api/me', headers: { cookie } })
    assert.equal(replayed.statusCode, 401)
    assert.equal((await cp.app.inject({ url: `/api/traces?project_id=${ws.projectId}`, headers: { cookie } })).statusCode, 401)
  })

  it('judges a person by their role: a viewer of the project reads it and changes nothing', async () => {
    const cookie = await signIn(cp.app, 'mia@acme.example')
    assert.equal((await cp.app.inject({ url: `/api/promptsets?project_id=${ws.projectId}`, headers: { cookie } })).statusCode, 200)
    const write = await cp.app.inject({ method: 'POST', url: `/api/promptsets?project_id=${ws.projectId}`, headers: { cookie, ...csrf }, payload: { name: 'nope' } })
    assert.deepEqual([write.statusCode, write.json()], [403, { message: 'Not allowed: this needs the permission prompts:write (docs/permissions.md)' }])
    const noCsrf = await cp.app.inject({ method: 'POST', url: `/api/promptsets?project_id=${ws.projectId}`, headers: { cookie }, payload: { name: 'nope' } })
    assert.equal(noCsrf.statusCode, 403)
    assert.match(noCsrf.json().message, /x-tracewell-csrf/)
  })

  it('renames a person, lists their sessions and ends one elsewhere', async () => {
    const here = await signIn(cp.app, 'mia@acme.example')
    const elsewhere = await signIn(cp.app, 'mia@acme.example')
    const renamed = await cp.app.inject({ method: 'PATCH', url: '/api/me', headers: { cookie: here, ...csrf }, payload: { name: '  Mia M.  ' } })
    assert.deepEqual([renamed.statusCode, renamed.json().user.name], [200, 'Mia M.'])
    const blank = await cp.app.inject({ method: 'PATCH', url: '/api/me', headers: { cookie: here, ...csrf }, payload: { name: '   ' } })
    assert.deepEqual([blank.statusCode, blank.json()], [400, { message: 'body/name: must not be blank' }])
    const sessions = (await cp.app.inject({ url: '/api/me/sessions', headers: { cookie: here } })).json().sessions as { id: string; current: boolean }[]
    assert.equal(sessions.filter((session) => session.current).length, 1)
    const other = (await cp.app.inject({ url: '/api/me/sessions', headers: { cookie: elsewhere } })).json().sessions.find((session: { current: boolean }) => session.current)
    const ended = await cp.app.inject({ method: 'DELETE', url: `/api/me/sessions/${other.id}`, headers: { cookie: here, ...csrf } })
    assert.equal(ended.statusCode, 204)
    assert.equal((await cp.app.inject({ url: '/api/me', headers: { cookie: elsewhere } })).statusCode, 401)
    const again = await cp.app.inject({ method: 'DELETE', url: `/api/me/sessions/${other.id}`, headers: { cookie: here, ...csrf } })
    assert.equal(again.statusCode, 404)
  })

  it('changes a password only with the current one and a good new one, and ends every other session', async () => {
    await addPerson(cp.db, ws.teamId, 'viewer', 'pat@acme.example')
    const here = await signIn(cp.app, 'pat@acme.example')
    const elsewhere = await signIn(cp.app, 'pat@acme.example')
    const change = (payload: object) => cp.app.inject({ method: 'PUT', url: '/api/me/password', headers: { cookie: here, ...csrf }, payload, remoteAddress: '10.0.0.9' })
    const wrong = await change({ currentPassword: 'not it at all, really', newPassword: 'a brand new passphrase' })
    assert.deepEqual([wrong.statusCode, wrong.json()], [400, { message: 'body/currentPassword: not your current password' }])
    const weak = await change({ currentPassword: testPassword, newPassword: 'short' })
    assert.deepEqual([weak.statusCode, weak.json()], [400, { message: 'body/newPassword: must be at least 12 characters long' }])
    assert.equal((await cp.app.inject({ url: '/api/me', headers: { cookie: elsewhere } })).statusCode, 200, 'nothing changed yet')
    const changed = await change({ currentPassword: testPassword, newPassword: 'a brand new passphrase' })
    assert.equal(changed.statusCode, 204)
    assert.equal((await cp.app.inject({ url: '/api/me', headers: { cookie: here } })).statusCode, 200, 'this session stays')
    assert.equal((await cp.app.inject({ url: '/api/me', headers: { cookie: elsewhere } })).statusCode, 401, 'the others end')
    assert.equal((await signInWith({ email: 'pat@acme.example', password: testPassword }, csrf, '10.0.0.10')).statusCode, 401)
    assert.equal((await signInWith({ email: 'pat@acme.example', password: 'a brand new passphrase' }, csrf, '10.0.0.10')).statusCode, 200)
  })

  it('keeps a person’s own account from keys: 403 with a key, 401 without anyone', async () => {
    const withKey = await cp.app.inject({ url: '/api/me', headers: { 'x-api-key': ws.teamKey } })
    assert.deepEqual([withKey.statusCode, withKey.json()], [403, { message: 'Only a signed-in person may; keys may not' }])
    assert.equal((await cp.app.inject({ url: '/api/me' })).statusCode, 401)
  })

  it('turns the team-key sign-in off once an owner exists, unless CONSOLE_KEY_SIGN_IN=true', async () => {
    const keySignIn = () => cp.app.inject({ method: 'POST', url: '/api/session', headers: csrf, payload: { apiKey: ws.teamKey } })
    assert.equal((await keySignIn()).statusCode, 200, 'no owner yet: upgraded installs keep signing in')
    await addPerson(cp.db, ws.teamId, 'owner', 'olga@acme.example')
    const refused = await keySignIn()
    assert.equal(refused.statusCode, 403)
    assert.match(refused.json().message, /^Signing in with a team key is off now that this install has an owner account/)
    const kept = await startControlPlane({ SESSION_SECRET: 'sign-in-session-secret-0123456789abcdef', CONSOLE_KEY_SIGN_IN: 'true' })
    try {
      const keptWs = await seedWorkspace(kept.db, 'Kept')
      await addPerson(kept.db, keptWs.teamId, 'owner', 'owner@kept.example')
      const allowed = await kept.app.inject({ method: 'POST', url: '/api/session', headers: csrf, payload: { apiKey: keptWs.teamKey } })
      assert.equal(allowed.statusCode, 200)
    } finally {
      await kept.close()
    }
  })
})
