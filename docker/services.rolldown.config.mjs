// `npm run build:services`: each service's TypeScript (ours, every @tracewell workspace it
// imports) compiled into one JavaScript file beside its sources, for the image. Development runs
// the .ts files directly; this build only removes, in production, what Node's type stripping
// costs at run time: the TypeScript-stripping WebAssembly module and the ~200 source files it
// reads and keeps, about 30 MiB of every process's resident memory (docs/benchmarks.md).
//
// Third-party packages stay in node_modules, loaded as they would be from the sources, so native
// add-ons, WebAssembly (PGlite) and packages that read their own files keep working unchanged.
import { existsSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

// The repository root, ending in a separator (paths under it start with it).
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..') + sep

/** [entry source, bundle] per program the image runs. */
const programs = [
  ['apps/ingest/src/server.ts', 'apps/ingest/dist/server.mjs'],
  // The worker threads' module (apps/ingest/src/body/trace-decode.pool.ts finds it beside the bundle).
  ['apps/ingest/src/body/trace-decode.worker.ts', 'apps/ingest/dist/trace-decode.worker.mjs'],
  ['apps/writer/src/server.ts', 'apps/writer/dist/server.mjs'],
  // The summariser's thread (apps/writer/src/summariser-thread.ts finds it beside the bundle).
  ['apps/writer/src/summariser.thread.ts', 'apps/writer/dist/summariser.thread.mjs'],
  ['apps/writer/src/bin/replay-failed.ts', 'apps/writer/dist/replay-failed.mjs'],
  ['apps/control-plane/src/server.ts', 'apps/control-plane/dist/server.mjs'],
  ['apps/janitor/src/server.ts', 'apps/janitor/dist/server.mjs'],
  ['apps/evaluator/src/server.ts', 'apps/evaluator/dist/server.mjs'],
  ['apps/all-in-one/src/server.ts', 'apps/all-in-one/dist/server.mjs'],
  ['apps/all-in-one/src/bin/show-keys.ts', 'apps/all-in-one/dist/show-keys.mjs'],
  ['apps/migrate/src/migrate.ts', 'apps/migrate/dist/migrate.mjs'],
]

const packageName = (id) => id.split('/').slice(0, id.startsWith('@') ? 2 : 1).join('/')

/**
 * Whether a bare import is left to Node at run time: only when Node, resolving it from where the
 * importing file is, would find the root's node_modules, which the bundle finds too. A package the
 * importer finds in a node_modules of a workspace (a major version other than the root's, as the
 * control plane's ajv 8 once was beside eslint's ajv 6) is bundled instead, and so are that
 * package's own dependencies found there: from the bundle's folder Node would find the root's version,
 * or, in the image (installed without devDependencies), none at all ("Cannot find module
 * 'json-schema-traverse'" at start).
 */
export function isExternal(id, importer) {
  if (id.startsWith('node:')) return true
  if (id.startsWith('.') || id.startsWith('/') || id.startsWith('\0') || id.startsWith('@tracewell/')) return false
  if (importer === undefined) return true
  for (let dir = dirname(importer); dir.startsWith(root); dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', packageName(id)))) return `${dir}${sep}` === root
  }
  return true
}

/**
 * `import.meta.url` in a bundled module still names its source file (the console's dist folder,
 * the price table's createRequire are found from there), written relative to the bundle so the
 * tree can move as a whole.
 */
function sourceUrls(bundle) {
  return {
    name: 'source-import-meta-url',
    transform(code, id) {
      if (!code.includes('import.meta.url') || id.startsWith('\0') || id.includes(`${sep}node_modules${sep}`)) return null
      const fromBundle = relative(dirname(join(root, bundle)), id).split(sep).join('/')
      return { code: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`), map: null }
    },
  }
}

export default programs.map(([entry, bundle]) => ({
  input: join(root, entry),
  platform: 'node',
  external: isExternal,
  plugins: [sourceUrls(bundle)],
  output: {
    file: join(root, bundle),
    format: 'esm',
    // One file a program: a module imported when needed (a migration, when it runs) is bundled
    // in, and still evaluated only when imported.
    codeSplitting: false,
    // Comments are most of our source text, and a module's source stays in memory for as long
    // as the process runs.
    comments: false,
    sourcemap: false,
  },
}))
