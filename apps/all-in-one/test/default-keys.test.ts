import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, describe, it } from 'node:test'
import { AllInOneConfigSchema, loadConfig } from '@tracewell/config'
import { buildAllInOneApp } from '../src/index.ts'
import { defaultKeysBanner } from '../src/default-keys.banner.ts'

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

    const shown = showKeys({ DATA_DIR: dataDir, PORT: '3999', HOST: '127.0.0.1' })
    assert.deepEqual(shown, {
      status: 0,
      stdout: defaultKeysBanner(workspace, 'http://127.0.0.1:3999', `The default keys of this Tracewell (${keysFile}):`),
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
    assert.equal(showKeys({ DATA_DIR: dataDir }).status, 1)
  })
})
