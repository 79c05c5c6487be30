import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { repoRoot } from './manifest-helpers.ts'

// The image installs production dependencies only (npm ci --omit=dev), and its bundles find the
// packages they leave to Node from their own folders, that is in the root node_modules. A package
// a bundle leaves to Node must therefore be there in a production install: the all-in-one bundle
// once left ajv 8's json-schema-traverse (the control plane's own node_modules) to Node, which
// found the root's copy (another major version, for eslint's ajv 6) in development and none in
// the image, where the container exited with "Cannot find module 'json-schema-traverse'".

const bundles = [
  'apps/ingest/dist/server.mjs',
  'apps/writer/dist/server.mjs',
  'apps/writer/dist/replay-failed.mjs',
  'apps/control-plane/dist/server.mjs',
  'apps/janitor/dist/server.mjs',
  'apps/all-in-one/dist/server.mjs',
  'apps/all-in-one/dist/show-keys.mjs',
  'apps/migrate/dist/migrate.mjs',
]

const packageName = (id: string) => id.split('/').slice(0, id.startsWith('@') ? 2 : 1).join('/')

/** The bare imports a bundle leaves to Node (static, dynamic and require). */
function externalImports(code: string): Set<string> {
  const found = new Set<string>()
  // Rolldown writes static imports one a line; dynamic imports and requires anywhere, except in
  // the code that ajv generates as text (a template or string starting with `require(`).
  for (const match of code.matchAll(/^import\s(?:[^"';]*\sfrom\s)?["']([^"'./][^"']*)["'];?$|\bimport\(\s*["']([^"'./][^"']*)["']\s*\)|(?<![`"])\b(?:__)?require\(\s*["']([^"'./][^"']*)["']\s*\)/gm)) {
    const id = (match[1] ?? match[2] ?? match[3]) as string
    if (!id.startsWith('node:')) found.add(packageName(id))
  }
  return found
}

describe('what the service bundles leave to Node', () => {
  let lockfile: Record<string, { dev?: boolean; optional?: boolean }>

  before(() => {
    execFileSync('npm', ['run', 'build:services'], { cwd: repoRoot, stdio: 'ignore' })
    lockfile = (JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: typeof lockfile }).packages
  })

  it('is installed at the root by a production install, for every bundle', () => {
    for (const bundle of bundles) {
      const externals = externalImports(readFileSync(join(repoRoot, bundle), 'utf8'))
      assert.ok(externals.has('fastify') || bundle.includes('migrate') || bundle.includes('show-keys') || bundle.includes('replay'), `${bundle} leaves fastify to Node`)
      for (const name of externals) {
        const entry = lockfile[`node_modules/${name}`]
        assert.ok(entry !== undefined, `${bundle} imports ${name}, which is not installed at the root`)
        assert.notEqual(entry.dev, true, `${bundle} imports ${name}, which only a development install has at the root`)
      }
    }
  })

  it('bundles a workspace’s own copy of a package, and that copy’s own dependencies', async () => {
    const config = '../services.rolldown.config.mjs'
    const { isExternal } = (await import(config)) as { isExternal: (id: string, importer?: string) => boolean }
    // A workspace with a copy of its own (another major version than the root's, say) and that
    // copy's own dependency beside it, as npm lays them out.
    // Under the repository, so that the config's resolution walks up from it as from a workspace;
    // node_modules/.cache is not there in a fresh install until something writes to it.
    const cache = join(repoRoot, 'node_modules/.cache')
    mkdirSync(cache, { recursive: true })
    const workspace = mkdtempSync(join(cache, 'bundle-externals-'))
    after(() => rmSync(workspace, { recursive: true, force: true }))
    for (const name of ['own-copy', 'its-dependency']) mkdirSync(join(workspace, 'node_modules', name), { recursive: true })
    const copy = join(workspace, 'node_modules/own-copy/index.js')
    writeFileSync(copy, '')
    assert.equal(isExternal('own-copy', join(workspace, 'src/routes.ts')), false)
    assert.equal(isExternal('its-dependency', copy), false)
    assert.equal(isExternal('fastify', join(repoRoot, 'apps/ingest/src/app.ts')), true)
    assert.equal(isExternal('node:fs', copy), true)
  })
})
