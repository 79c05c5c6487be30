import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { routeValidator } from '../src/routes/control-plane.routes.ts'
import { startControlPlane, type TestControlPlane } from './helper.ts'

// Route validators are compiled on a route's first request, not at start (storable-input.validator.ts):
// a schema Ajv cannot compile would surface as a 500 on that request. This compiles the schema of
// every request part of every operation the OpenAPI document publishes (the routes' own schemas,
// parameter by parameter), as those first requests would.

interface Operation {
  parameters?: Array<{ in: string; name: string; schema?: object }>
  requestBody?: { content?: Record<string, { schema?: object }> }
}

const PARTS: Record<string, string> = { query: 'querystring', path: 'params', header: 'headers' }

describe('every control-plane route validator compiles', () => {
  let cp: TestControlPlane
  let operations: Array<[string, Operation]> = []

  before(async () => {
    cp = await startControlPlane()
    const document = (await cp.app.inject({ url: '/docs/json' })).json() as { paths: Record<string, Record<string, Operation>> }
    operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]): [string, Operation] => [`${method.toUpperCase()} ${path}`, operation]))
  })
  after(() => cp.close())

  it('compiles each part of each operation as its first request does', () => {
    let compiled = 0
    const compile = (name: string, schema: object, httpPart: string) => {
      const validate = routeValidator({ schema, httpPart })
      // Any value will do: the first call compiles, whatever it then answers.
      assert.doesNotThrow(() => validate(null), name)
      compiled++
    }
    for (const [name, operation] of operations) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.schema !== undefined) compile(`${name} ${parameter.in} ${parameter.name}`, parameter.schema, PARTS[parameter.in] ?? parameter.in)
      }
      for (const [type, content] of Object.entries(operation.requestBody?.content ?? {})) {
        if (content.schema !== undefined) compile(`${name} body ${type}`, content.schema, 'body')
      }
    }
    // The control plane's API, not an empty walk: hundreds of validated parts.
    assert.ok(compiled > 200, `only ${compiled} validated parts found`)
  })
})
