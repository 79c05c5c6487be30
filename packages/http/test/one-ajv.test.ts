import assert from 'node:assert/strict'
import { realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

// Fastify's validator compiler, its serializer compiler, ajv-formats and the control plane each
// load ajv 8 from wherever npm put it: four copies in one process when eslint's ajv 6 held the
// root's place, each with its own modules and compiled meta-schemas (docs/benchmarks.md#at-rest).
// The root's package.json asks for ajv 8 so that npm installs it once, at the root.

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url))

/** Where `id` is found from the package `from` (a package directory's package.json). */
const packageDirOf = (id: string, from: string) => dirname(realpathSync(createRequire(from).resolve(`${id}/package.json`)))

describe('ajv', () => {
  it('is one copy for Fastify’s compilers, ajv-formats and the control plane', () => {
    const fastify = packageDirOf('fastify', `${repoRoot}packages/http/package.json`)
    const ajvCompiler = packageDirOf('@fastify/ajv-compiler', `${fastify}/package.json`)
    const serializerCompiler = packageDirOf('fast-json-stringify', `${fastify}/package.json`)
    const copies = new Set([
      packageDirOf('ajv', `${ajvCompiler}/package.json`),
      packageDirOf('ajv', `${packageDirOf('ajv-formats', `${ajvCompiler}/package.json`)}/package.json`),
      packageDirOf('ajv', `${serializerCompiler}/package.json`),
      packageDirOf('ajv', `${repoRoot}apps/control-plane/package.json`),
    ])
    assert.deepEqual([...copies], [`${repoRoot}node_modules/ajv`])
  })
})
