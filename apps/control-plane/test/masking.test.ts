import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { getProjectMaskingRules } from '@tracewell/db'
import { seedWorkspace, startControlPlane, type TestControlPlane, type Workspace } from './helper.ts'

describe('a project’s masking rules (team key)', { timeout: 60_000 }, () => {
  let cp: TestControlPlane
  let ws: Workspace
  let other: Workspace
  const defaults = [{ detector: 'secret' }]

  before(async () => {
    cp = await startControlPlane({ MASKING_DEFAULT_RULES: JSON.stringify(defaults) })
    ws = await seedWorkspace(cp.db, 'Acme')
    other = await seedWorkspace(cp.db, 'Other')
  })
  after(() => cp.close())

  const url = (projectId = ws.projectId) => `/api/projects/${projectId}/masking`
  const asTeam = (method: 'GET' | 'PUT' | 'DELETE' | 'POST', path: string, payload?: object, key = ws.teamKey) =>
    cp.app.inject({ method, url: path, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) })

  it('reads MASKING_DEFAULT_RULES when the project has no rules of its own', async () => {
    const response = await asTeam('GET', url())
    assert.deepEqual([response.statusCode, response.json()], [200, { projectId: ws.projectId, source: 'default', rules: defaults, default: defaults }])
  })

  it('stores the project’s own rules and reads them back', async () => {
    const rules = [{ detector: 'email' }, { detector: 'regex', pattern: 'ACCT-[0-9]{6}', attributes: ['llm.*', 'user.?d'], replacement: '<account>' }]
    const set = await asTeam('PUT', url(), { rules })
    assert.deepEqual([set.statusCode, set.json()], [200, { projectId: ws.projectId, source: 'project', rules, default: defaults }])
    assert.deepEqual((await asTeam('GET', url())).json(), set.json())
    assert.deepEqual((await getProjectMaskingRules(cp.db, ws.projectId))?.rules, rules)
  })

  it('refuses a pattern that does not compile or would backtrack, naming the rule, and keeps what was stored', async () => {
    const before = (await getProjectMaskingRules(cp.db, ws.projectId))?.rules
    const cases: [object, string][] = [
      [{ rules: [{ detector: 'email' }, { detector: 'phone' }, { detector: 'regex', pattern: '(\\w+)\\1' }] }, 'body/rules/2/pattern: error parsing regexp: invalid escape sequence: `\\1` (RE2 syntax: no backreferences or lookaround)'],
      [{ rules: [{ detector: 'regex', pattern: 'sk-(?=live)' }] }, 'body/rules/0/pattern: error parsing regexp: invalid or unsupported Perl syntax: `(?=` (RE2 syntax: no backreferences or lookaround)'],
      [{ rules: [{ detector: 'regex', pattern: '(unclosed' }] }, 'body/rules/0/pattern: error parsing regexp: missing closing ): `(unclosed` (RE2 syntax: no backreferences or lookaround)'],
      [{ rules: [{ detector: 'regex' }] }, 'body/rules/0/pattern: required with the regex detector'],
      [{ rules: [{ detector: 'email', pattern: 'x' }] }, 'body/rules/0/pattern: only the regex detector takes a pattern, not email'],
      [{ rules: [{ detector: 'name' }] }, 'body/rules/0/detector: must be equal to one of the allowed values'],
      [{ rules: [{ detector: 'email', attributes: [] }] }, 'body/rules/0/attributes: must NOT have fewer than 1 items'],
      [{ rules: [{ detector: 'email', color: 'red' }] }, 'body/rules/0: must NOT have additional properties'],
      [{}, "body: must have required property 'rules'"],
    ]
    for (const [payload, message] of cases) {
      const response = await asTeam('PUT', url(), payload)
      assert.deepEqual([response.statusCode, response.json()], [400, { message }], JSON.stringify(payload))
    }
    assert.deepEqual((await getProjectMaskingRules(cp.db, ws.projectId))?.rules, before, 'nothing stored')
  })

  it('tests rules on a text: the project’s own, or the ones given', async () => {
    const own = await asTeam('POST', `${url()}/test`, { text: 'mail bob@example.com about ACCT-123456' })
    // The regex rule applies to two attribute globs only; the tester runs every rule.
    assert.deepEqual([own.statusCode, own.json()], [200, { masked: 'mail [REDACTED:email] about <account>', changed: true }])
    const prompts = JSON.stringify([{ role: 'user', content: 'card 4111 1111 1111 1111, not 4111 1111 1111 1112' }])
    const given = await asTeam('POST', `${url()}/test`, { text: prompts, rules: [{ detector: 'credit_card' }] })
    assert.equal(given.statusCode, 200)
    assert.deepEqual(JSON.parse(given.json().masked), [{ role: 'user', content: 'card [REDACTED:credit_card], not 4111 1111 1111 1112' }])
    const nothing = await asTeam('POST', `${url()}/test`, { text: 'nothing here', rules: [{ detector: 'ip' }] })
    assert.deepEqual(nothing.json(), { masked: 'nothing here', changed: false })
    const bad = await asTeam('POST', `${url()}/test`, { text: 'x', rules: [{ detector: 'regex', pattern: '(?<=a)b' }] })
    assert.deepEqual([bad.statusCode, bad.json().message.startsWith('body/rules/0/pattern: ')], [400, true])
  })

  it('an empty list masks nothing; DELETE goes back to the default with 204', async () => {
    const none = await asTeam('PUT', url(), { rules: [] })
    assert.deepEqual(none.json(), { projectId: ws.projectId, source: 'project', rules: [], default: defaults })
    for (let i = 0; i < 2; i++) assert.deepEqual([(await asTeam('DELETE', url())).statusCode], [204])
    assert.equal((await asTeam('GET', url())).json().source, 'default')
    assert.equal(await getProjectMaskingRules(cp.db, ws.projectId), undefined)
  })

  it('hides another team’s project (404), refuses project keys a change (403) and no key (401)', async () => {
    for (const response of [
      await asTeam('GET', url(other.projectId)),
      await asTeam('PUT', url(other.projectId), { rules: [] }),
      await asTeam('POST', `${url(other.projectId)}/test`, { text: 'x' }),
      await asTeam('DELETE', url(other.projectId)),
    ]) {
      assert.deepEqual([response.statusCode, response.json()], [404, { message: 'Project not found' }])
    }
    assert.equal((await asTeam('PUT', url(), { rules: [] }, ws.projectKey)).statusCode, 403)
    assert.equal((await cp.app.inject({ method: 'GET', url: url() })).statusCode, 401)
  })
})
