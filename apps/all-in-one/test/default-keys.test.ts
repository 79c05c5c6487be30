import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, describe, it } from 'node:test'
import { AllInOneConfigSchema, loadConfig } from '@tracewell/config'
import { buildAllInOneApp } from '../src/index.ts'
import { defaultKeysBanner, setupLinkBanner } from '../src/default-keys.banner.ts'

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url))

/** `npm run keys` as the root script runs it, with only the settings given here. */
function showKeys(env: Record<string, string>) {
  const result = spawnSync(process.execPath, ['apps/all-in-one/src/bin/show-keys.ts'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe('npm run keys: the first start’s keys can be shown again', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-keys-'))
  after(() => rmSync(dataDir, { recursive: true, force: true }))
  const config = loadConfig(AllInOneConfigSchema, { DATA_DIR: dataDir, LOG_LEVEL: 'silent' })
  const keysFile = join(dataDir, 'default-keys.json')

  it('shows nothing before a first start, and says why', () => {
    assert.deepEqual(showKeys({ DATA_DIR: dataDir }), {
      status: 1,
      stdout: '',
      stderr:
        `No default keys in ${keysFile}. \`npm start\` creates them on its first start with an empty database and no INIT_* settings, ` +
        'and removes them once one of them is revoked. Create a key with POST /api/api-key (docs/api.md#api-keys).\n',
    })
  })

  it('keeps the keys of the first start, owner-readable only, until one is revoked', async () => {
    const first = await buildAllInOneApp(config)
    const workspace = first.firstStart
    await first.app.close()
    assert.ok(workspace, 'the first start creates the default keys')
    assert.deepEqual(JSON.parse(readFileSync(keysFile, 'utf8')), workspace)
    assert.equal(statSync(keysFile).mode & 0o777, 0o600)

    // Nobody owns the team yet: the setup link is shown beside the keys.
    assert.ok(first.setupToken)
    const shown = showKeys({ DATA_DIR: dataDir, PORT: '3999', HOST: '127.0.0.1' })
    assert.deepEqual(shown, {
      status: 0,
      stdout:
        defaultKeysBanner(workspace, 'http://127.0.0.1:3999', `The default keys of this Tracewell (${keysFile}):`) +
        setupLinkBanner(first.setupToken, 'http://127.0.0.1:3999'),
      stderr: '',
    })
    assert.match(shown.stdout, new RegExp(`Project API key: +${workspace.projectApiKey}\n`))
    assert.match(shown.stdout, new RegExp(`Team API key: +${workspace.teamApiKey}\n`))

    // A later start keeps them while both still work; the team key revokes the project key.
    const second = await buildAllInOneApp(config)
    assert.equal(second.firstStart, null)
    assert.equal(existsSync(keysFile), true)
    const teamKey = { 'x-api-key': workspace.teamApiKey }
    const listed = await second.app.inject({ url: `/api/api-keys?project_id=${workspace.projectId}`, headers: teamKey })
    assert.equal(listed.statusCode, 200)
    const [projectKey] = listed.json().apiKeys as Array<{ id: string }>
    assert.ok(projectKey)
    const revoked = await second.app.inject({ method: 'DELETE', url: `/api/api-keys/${projectKey.id}`, headers: teamKey })
    assert.equal(revoked.statusCode, 204)
    await second.app.close()

    const third = await buildAllInOneApp(config)
    await third.app.close()
    assert.equal(existsSync(keysFile), false, 'the start after a revocation removes the saved keys')
    assert.equal(third.setupToken, first.setupToken, 'the unused setup link stays the same across starts')
    const onlyTheLink = showKeys({ DATA_DIR: dataDir })
    assert.deepEqual([onlyTheLink.status, onlyTheLink.stdout], [0, setupLinkBanner(first.setupToken, 'http://localhost:3000')])
  })
})

describe('npm run keys: the setup link until it is used', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-setup-'))
  after(() => rmSync(dataDir, { recursive: true, force: true }))
  const config = loadConfig(AllInOneConfigSchema, { DATA_DIR: dataDir, LOG_LEVEL: 'silent' })
  const tokenFile = join(dataDir, 'setup-token')

  it('is kept owner-readable only, and forgotten once it made the owner', async () => {
    const { app, setupToken } = await buildAllInOneApp(config)
    try {
      assert.ok(setupToken)
      assert.equal(readFileSync(tokenFile, 'utf8'), `${setupToken}\n`)
      assert.equal(statSync(tokenFile).mode & 0o777, 0o600)
      const made = await app.inject({
        method: 'POST',
        url: `/api/setup/${setupToken}`,
        headers: { 'x-tracewell-csrf': '1' },
        payload: { email: 'owner@example.com', name: 'Owner', password: 'a long setup passphrase' },
      })
      assert.equal(made.statusCode, 201, made.body)
      assert.equal(existsSync(tokenFile), false, 'using it forgets it at once')
      assert.doesNotMatch(showKeys({ DATA_DIR: dataDir }).stdout, /\/setup\//)
    } finally {
      await app.close()
    }
    const again = await buildAllInOneApp(config)
    await again.app.close()
    assert.equal(again.setupToken, null, 'no link once there is an owner')
    assert.equal(existsSync(tokenFile), false)
  })

  it('is not offered where INIT_USER_EMAIL made the owner', async () => {
    const headless = mkdtempSync(join(tmpdir(), 'tracewell-headless-'))
    try {
      const settings = { DATA_DIR: headless, LOG_LEVEL: 'silent', INIT_USER_EMAIL: 'ops@example.com', INIT_USER_PASSWORD: 'ops password 0123' }
      const { app, firstStart, setupToken } = await buildAllInOneApp(loadConfig(AllInOneConfigSchema, settings))
      await app.close()
      assert.ok(firstStart, 'the default keys are made as ever')
      assert.equal(setupToken, null)
      assert.equal(existsSync(join(headless, 'setup-token')), false)
    } finally {
      rmSync(headless, { recursive: true, force: true })
    }
  })
})
