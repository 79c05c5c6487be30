// `npm run docs:permissions`: rewrites docs/permissions.md from the permission matrix.
import { readFile, writeFile } from 'node:fs/promises'
import { permissionsPage } from '../permissions-page.ts'

const pagePath = new URL('../../../../docs/permissions.md', import.meta.url)
const page = await readFile(pagePath, 'utf8').catch(() => '')
const updated = permissionsPage()
await writeFile(pagePath, updated)
process.stdout.write(updated === page ? 'docs/permissions.md: up to date\n' : 'docs/permissions.md: rewritten from the matrix\n')
