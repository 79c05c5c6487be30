import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { spanOriginFields } from '@tracewell/span-schema'
import { pastedOutputLines } from '@tracewell/test-support'
import { allRoutesOpenApi } from '../src/api-docs/openapi-document.ts'
import { ROUTE_INDEX_END, ROUTE_INDEX_START, routeIndexTable, withRouteIndex, type OpenApiDocument } from '../src/api-docs/route-index.ts'

// docs/api.md follows from the code: its route index is the OpenAPI document written out (npm run
// docs:api), its table of derived span fields is the span schema's, and no page of docs/ holds
// pasted test-runner output.

const docsDir = new URL('../../../docs/', import.meta.url)
const apiPage = () => readFileSync(new URL('api.md', docsDir), 'utf8')

describe('docs/api.md and the OpenAPI document', () => {
  let database: TestDatabase
  let document: OpenApiDocument
  before(async () => {
    database = await createTestDatabase()
    document = await allRoutesOpenApi({ databaseUrl: database.url, db: database.db })
  })
  after(() => database.drop())

  it('has the route index written from the OpenAPI document (run `npm run docs:api` when this fails)', () => {
    const page = apiPage()
    assert.equal(page, withRouteIndex(page, routeIndexTable(document)), 'docs/api.md: the route index differs from the routes; run `npm run docs:api`')
  })

  it('lists every route and method of the document, the label and model-price routes and ?label= among them', () => {
    const index = apiPage().slice(apiPage().indexOf(ROUTE_INDEX_START), apiPage().indexOf(ROUTE_INDEX_END))
    const listed = [...index.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE) ([^`]+)` \|/gm)].map((match) => `${match[1]} ${match[2]}`)
    const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`),
    )
    assert.deepEqual([...listed].sort(), [...routes].sort())
    for (const route of ['PUT /api/promptsets/:promptsetId/labels/:label', 'GET /api/promptsets/:promptsetId/label-history', 'POST /api/projects/:projectId/model-prices']) {
      assert.ok(listed.includes(route), route)
    }
    assert.match(index, /^\| `GET \/api\/promptset` \| .* \| .*`label`/m)
    // The sections after the index describe the same routes.
    for (const route of routes.filter((route) => route.startsWith('GET /api/projects/:projectId/model-prices') || route.includes('/labels'))) {
      assert.ok(apiPage().slice(apiPage().indexOf(ROUTE_INDEX_END)).includes(`\`${route}`), `${route} is described below the index`)
    }
  })

  it('has the span schema’s derived fields in its table of derived columns, no more and no fewer', () => {
    const page = apiPage()
    const table = page.slice(page.indexOf('<!-- derived columns -->'), page.indexOf('<!-- end of derived columns -->'))
    assert.ok(table.length > 0, 'the derived columns table is marked')
    const documented = [...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((row) => [...(row[1] ?? '').matchAll(/`(\w+)`/g)].map((field) => field[1]))
    assert.deepEqual(documented.sort(), Object.keys(spanOriginFields).sort())
  })
})

it('no page of docs/ (nor the README) holds pasted test-runner output', () => {
  const pages: Array<[string, string]> = readdirSync(docsDir).filter((name) => name.endsWith('.md')).map((name) => [`docs/${name}`, readFileSync(new URL(name, docsDir), 'utf8')])
  pages.push(['README.md', readFileSync(new URL('../README.md', docsDir), 'utf8')])
  assert.ok(pages.length >= 9)
  for (const [name, text] of pages) assert.deepEqual(pastedOutputLines(text), [], `${name} holds pasted test-runner output`)
})
