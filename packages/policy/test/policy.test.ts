import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import { effectiveProjectRole, keyAllows, mayGrant, permissions, permissionsPage, permissionTableMarkdown, roleAllows, teamKeyAllows, type Permission } from '../src/index.ts'

describe('the permission matrix', { timeout: 10_000 }, () => {
  it('lets a viewer read but not change, a member work, an admin run the project, an owner the team', () => {
    assert.equal(roleAllows('viewer', 'traces:read'), true)
    assert.equal(roleAllows('viewer', 'prompts:write'), false)
    assert.equal(roleAllows('member', 'prompts:write'), true)
    assert.equal(roleAllows('member', 'prompts:label-production'), false)
    assert.equal(roleAllows('admin', 'prompts:label-production'), true)
    assert.equal(roleAllows('admin', 'sso:write'), false)
    assert.equal(roleAllows('owner', 'sso:write'), true)
    assert.equal(roleAllows('none', 'traces:read'), false)
  })

  it("judges a project by the person's project role when one is set, higher or lower than the team role", () => {
    assert.equal(effectiveProjectRole('viewer', 'admin'), 'admin')
    assert.equal(effectiveProjectRole('admin', 'none'), 'none')
    assert.equal(effectiveProjectRole('member', null), 'member')
  })

  it('gives project keys their scopes, keys without scopes every scope, and no key what spends or runs the team', () => {
    assert.equal(keyAllows(['ingest'], 'traces:ingest'), true)
    assert.equal(keyAllows(['ingest'], 'traces:read'), false)
    assert.equal(keyAllows(['ingest', 'read'], 'prompts:read'), true)
    assert.equal(keyAllows(['read'], 'prompts:write'), false)
    assert.equal(keyAllows(null, 'prompts:write'), true)
    assert.equal(keyAllows(null, 'dashboards:write'), false, 'keys made before scopes keep the rights they had')
    assert.equal(keyAllows(['write'], 'dashboards:write'), true)
    assert.equal(keyAllows(null, 'traces:delete'), false)
    assert.equal(keyAllows(null, 'playground:run'), false)
    assert.equal(keyAllows(null, 'members:manage'), false)
    assert.equal(teamKeyAllows('keys:manage'), true)
    assert.equal(teamKeyAllows('sso:write'), false)
  })

  it('lets nobody grant above their own role', () => {
    assert.equal(mayGrant('admin', 'owner'), false)
    assert.equal(mayGrant('admin', 'admin'), true)
    assert.equal(mayGrant('owner', 'owner'), true)
    assert.equal(mayGrant('member', 'admin'), false)
  })

  it('writes a table row for every permission', () => {
    const table = permissionTableMarkdown()
    for (const permission of Object.keys(permissions) as Permission[]) assert.match(table, new RegExp(`^\\| \`${permission}\` \\|`, 'm'))
  })
})

describe('docs/permissions.md', () => {
  it('is the matrix as it is now (run `npm run docs:permissions` when this fails)', async () => {
    const page = await readFile(new URL('../../../docs/permissions.md', import.meta.url), 'utf8')
    assert.equal(page, permissionsPage(), 'docs/permissions.md differs from the matrix; run `npm run docs:permissions`')
  })
})
