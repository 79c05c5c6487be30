import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { AllInOneConfigSchema, loadConfig } from '@tracewell/config'
import { buildAllInOneApp } from '../src/index.ts'

describe('the console in npm start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tracewell-all-in-one-console-'))
  const distDir = join(dataDir, 'dist')
  mkdirSync(join(distDir, 'assets'), { recursive: true })
  writeFileSync(join(distDir, 'index.html'), '<!doctype html><title>Tracewell</title>')
  after(() => rmSync(dataDir, { recursive: true, force: true }))
  const config = loadConfig(AllInOneConfigSchema, { DATA_DIR: dataDir, LOG_LEVEL: 'silent' })

  it('serves the console, and keeps a session secret in DATA_DIR so sign-ins survive a restart', async () => {
    const first = await buildAllInOneApp(config, { consoleDistDir: distDir })
    const workspace = first.firstStart
    assert.ok(workspace)
    const page = await first.app.inject({ url: '/traces' })
    assert.deepEqual([page.statusCode, page.body], [200, '<!doctype html><title>Tracewell</title>'])

    const signIn = await first.app.inject({
      method: 'POST',
      url: '/api/session',
      headers: { 'x-tracewell-csrf': '1', 'content-type': 'application/json' },
      payload: { apiKey: workspace.teamApiKey },
    })
    assert.equal(signIn.statusCode, 200)
    const cookie = signIn.cookies.find((candidate) => candidate.name === 'tw_session')
    assert.ok(cookie)
    const secretFile = statSync(join(dataDir, 'session-secret'))
    assert.equal(secretFile.mode & 0o777, 0o600, 'readable by its owner only')
    await first.app.close()

    const second = await buildAllInOneApp(config, { consoleDistDir: distDir })
    const me = await second.app.inject({ url: '/api/session', headers: { cookie: `tw_session=${cookie.value}` } })
    assert.equal(me.statusCode, 200, 'the session of the first process is valid in the second')
    assert.equal(me.json().teamId, workspace.teamId)
    const projects = await second.app.inject({ url: '/api/projects', headers: { cookie: `tw_session=${cookie.value}` } })
    assert.deepEqual(projects.json().projects.map((project: { id: string }) => project.id), [workspace.projectId])
    await second.app.close()

    // SESSION_SECRET, when set, is used instead: the kept one's sessions no longer open.
    const third = await buildAllInOneApp({ ...config, SESSION_SECRET: 'another-secret-0123456789abcdef0123456789' }, { consoleDistDir: distDir })
    const refused = await third.app.inject({ url: '/api/session', headers: { cookie: `tw_session=${cookie.value}` } })
    assert.deepEqual([refused.statusCode, refused.json()], [401, { message: 'Not signed in' }])
    await third.app.close()
  })
})
