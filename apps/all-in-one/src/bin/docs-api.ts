// `npm run docs:api`: rewrites the route index of docs/api.md from the OpenAPI document of the
// all-in-one app (api-docs/route-index.ts). Over an embedded database of its own, or DATABASE_URL's.
import { readFile, writeFile } from 'node:fs/promises'
import { AllInOneConfigSchema, loadConfigOrExit } from '@tracewell/config'
import { allRoutesOpenApi } from '../api-docs/openapi-document.ts'
import { routeIndexTable, withRouteIndex } from '../api-docs/route-index.ts'

const pagePath = new URL('../../../../docs/api.md', import.meta.url)
const { DATABASE_URL } = loadConfigOrExit(AllInOneConfigSchema)
const document = await allRoutesOpenApi({ databaseUrl: DATABASE_URL })
const page = await readFile(pagePath, 'utf8')
const updated = withRouteIndex(page, routeIndexTable(document))
await writeFile(pagePath, updated)
process.stdout.write(updated === page ? 'docs/api.md: the route index is up to date\n' : 'docs/api.md: the route index was rewritten\n')
