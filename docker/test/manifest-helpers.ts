import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  ControlPlaneConfigSchema,
  defaultPorts,
  IngestConfigSchema,
  JanitorConfigSchema,
  EvaluatorConfigSchema,
  type loadConfig,
  MigrateConfigSchema,
  WriterConfigSchema,
} from '@tracewell/config'
import { parseAllDocuments } from 'yaml'

/** A service's settings schema (a TypeBox object keyed by env var name). */
export type SettingsSchema = Parameters<typeof loadConfig>[0]

export const dockerDir = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const repoRoot = resolve(dockerDir, '..')
export const k8sDir = join(dockerDir, 'k8s')

/** The one image every Tracewell container runs (compose, Deployments, the migration). */
export const tracewellImage = 'tracewell/tracewell'
export const namespace = 'tracewell'

/**
 * Ingest's OTLP/gRPC port: GRPC_PORT's default once the settings have it, the OTLP standard port
 * until then.
 */
export const otlpGrpcPort = Number((IngestConfigSchema.properties as Record<string, { default?: unknown }>).GRPC_PORT?.default ?? 4317)

/** The image docker/build-base-image.sh creates unless told otherwise (its BASE_TAG default). */
export function baseImageOfScript(): string {
  const match = /^tag=\$\{BASE_TAG:-([^}]+)\}$/m.exec(readFileSync(join(dockerDir, 'build-base-image.sh'), 'utf8'))
  if (!match) throw new Error('docker/build-base-image.sh: no tag=${BASE_TAG:-…} line')
  return match[1]!
}

/** The V8 flags every service runs with (docs/benchmarks.md), as the image's ENTRYPOINT gives them. */
export const serviceNodeFlags = ['--max-semi-space-size=8', '--no-parallel-scavenge', '--heap-growing-percent=50']

/**
 * A service: its source entry file (what npm start scripts run), the bundle the image runs
 * (built from it by docker/services.rolldown.config.mjs), default port and settings, and the V8
 * flags its container adds after the image's (a later V8 flag wins), which its npm start
 * scripts give too.
 */
export type ServiceSpec = { source: string; entry: string; port: number; schema: SettingsSchema; nodeFlags?: string[] }

/** Deployment / compose service name → what it must run. Ports come from @tracewell/config. */
export const services: Record<string, ServiceSpec> = {
  ingest: { source: 'apps/ingest/src/server.ts', entry: 'apps/ingest/dist/server.mjs', port: defaultPorts.ingest, schema: IngestConfigSchema },
  writer: {
    source: 'apps/writer/src/server.ts',
    entry: 'apps/writer/dist/server.mjs',
    port: defaultPorts.writer,
    schema: WriterConfigSchema,
    nodeFlags: ['--heap-growing-percent=100'],
  },
  'control-plane': { source: 'apps/control-plane/src/server.ts', entry: 'apps/control-plane/dist/server.mjs', port: defaultPorts.controlPlane, schema: ControlPlaneConfigSchema },
  janitor: { source: 'apps/janitor/src/server.ts', entry: 'apps/janitor/dist/server.mjs', port: defaultPorts.janitor, schema: JanitorConfigSchema },
  evaluator: { source: 'apps/evaluator/src/server.ts', entry: 'apps/evaluator/dist/server.mjs', port: defaultPorts.evaluator, schema: EvaluatorConfigSchema },
}
export const migrate = { source: 'apps/migrate/src/migrate.ts', entry: 'apps/migrate/dist/migrate.mjs', schema: MigrateConfigSchema }

/** What `npm run build:services` builds: bundle → source entry, as the repository's paths. */
export async function bundledPrograms(): Promise<Map<string, string>> {
  const configs = (await import(join(dockerDir, 'services.rolldown.config.mjs'))) as { default: Array<{ input: string; output: { file: string } }> }
  return new Map(configs.default.map(({ input, output }) => [relative(repoRoot, output.file), relative(repoRoot, input)]))
}

/** The V8 flags a command line leaves in effect, by name: a later `--flag=value` replaces an earlier one. */
export function effectiveNodeFlags(flags: readonly string[]): Record<string, string> {
  return Object.fromEntries(flags.map((flag) => [flag.split('=')[0], flag]))
}

/** Names that hold credentials (or URLs that may): never a literal in a manifest. */
export function isSecretName(name: string): boolean {
  return /(_KEY|_URL|SECRET|PASSWORD|TOKEN)$/.test(name)
}

/** Settings a service cannot start without: neither Optional nor defaulted. */
export function requiredSettings(schema: SettingsSchema): string[] {
  return (schema.required ?? []).filter((name) => schema.properties[name]?.default === undefined)
}

/** Valid stand-ins for each Secret key, to run the real config loader over a manifest's env. */
export const sampleSecretValues: Record<string, string> = {
  'database-url': 'postgres://tracewell:pw@db:5432/tracewell',
  'redis-url': 'redis://redis:6379',
  'admin-api-key': 'a'.repeat(32),
  'cron-api-key': 'c'.repeat(32),
  'session-secret': 's'.repeat(32),
  'llm-connection-encryption-key': 'e'.repeat(64),
  'init-team-api-key': 't'.repeat(32),
  'init-project-api-key': 'p'.repeat(32),
}

// ---- YAML ----------------------------------------------------------------------------------

export type Doc = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every document of a (multi-document) YAML file; throws on any YAML error. */
export function loadYamlDocuments(path: string): Doc[] {
  const documents = parseAllDocuments(readFileSync(path, 'utf8'), { merge: true })
  if (!Array.isArray(documents)) throw new Error(`${path}: not a YAML stream`)
  return documents.map((document, index) => {
    if (document.errors.length > 0) throw new Error(`${path} document ${index}: ${document.errors[0]?.message}`)
    return document.toJS({ maxAliasCount: 100 }) as Doc
  }).filter((value) => value !== null)
}

/** Compose variable interpolation (`${VAR}`, `${VAR:-default}`, `${VAR:?error}`, `$$`). */
export function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g, (match, name?: string, op?: string, arg?: string) => {
    if (match === '$$') return '$'
    const current = env[name!]
    const unset = op?.startsWith(':') ? current === undefined || current === '' : current === undefined
    if (!unset) return current!
    if (op?.endsWith('?')) throw new Error(`${name} is required: ${arg}`)
    return op?.endsWith('-') ? arg! : ''
  })
}

/** KEY=value lines of an env file (comments and blanks skipped). */
export function parseEnvFile(path: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line)
    if (match) env[match[1]!] = match[2]!
  }
  return env
}

// ---- Dockerfile ----------------------------------------------------------------------------

export type Instruction = { keyword: string; args: string }
export type Stage = { name: string | undefined; from: string; instructions: Instruction[] }

/** Instructions with line continuations joined and comments dropped, grouped by FROM. */
export function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const logical: string[] = []
  let pending = ''
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw)) continue
    const line = raw.trimEnd()
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1) + ' '
      continue
    }
    const full = (pending + line).trim()
    pending = ''
    if (full !== '') logical.push(full)
  }
  const globalArgs: Record<string, string> = {}
  const stages: Stage[] = []
  for (const line of logical) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? []
    const upper = keyword.toUpperCase()
    if (upper === 'FROM') {
      const match = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args)
      stages.push({ from: match?.[1] ?? '', name: match?.[2], instructions: [] })
    } else if (stages.length === 0) {
      if (upper === 'ARG') {
        const [name, value = ''] = args.split('=')
        globalArgs[name!] = value
      }
    } else {
      stages.at(-1)!.instructions.push({ keyword: upper, args })
    }
  }
  return { args: globalArgs, stages }
}

/** The source operands of a COPY (flags and destination removed). */
export function copySources(args: string): { flags: string[]; sources: string[] } {
  const words = args.trim().startsWith('[') ? (JSON.parse(args) as string[]) : args.trim().split(/\s+/)
  const flags = words.filter((word) => word.startsWith('--'))
  const operands = words.filter((word) => !word.startsWith('--'))
  return { flags, sources: operands.slice(0, -1) }
}

// ---- globs and .dockerignore ---------------------------------------------------------------

function globToRegExp(pattern: string): RegExp {
  let source = ''
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!
    if (char === '*' && pattern[i + 1] === '*') {
      source += '.*'
      i++
      if (pattern[i + 1] === '/') i++
    } else if (char === '*') source += '[^/]*'
    else if (char === '?') source += '[^/]'
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`^${source}$`)
}

export function globMatches(pattern: string, path: string): boolean {
  return globToRegExp(pattern.replace(/^\.\//, '').replace(/\/$/, '')).test(path)
}

/**
 * Whether the build context leaves `path` out, by Docker's rules: patterns are relative to the
 * context root, a pattern that matches a directory excludes everything below it, `!` re-includes,
 * and the last matching line wins.
 */
export function isDockerIgnored(rules: string[], path: string): boolean {
  const segments = path.split('/')
  const prefixes = segments.map((_, index) => segments.slice(0, index + 1).join('/'))
  let ignored = false
  for (const rule of rules) {
    const negated = rule.startsWith('!')
    const pattern = (negated ? rule.slice(1) : rule).replace(/^\//, '')
    if (prefixes.some((prefix) => globMatches(pattern, prefix))) ignored = !negated
  }
  return ignored
}

export function dockerIgnoreRules(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
}

/** Every workspace's package.json (repo-relative), from the root package.json's globs. */
export function workspaceManifests(): string[] {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { workspaces: string[] }
  return manifest.workspaces.flatMap((pattern) => {
    if (!pattern.includes('*')) return existsSync(join(repoRoot, pattern, 'package.json')) ? [`${pattern}/package.json`] : []
    const parent = pattern.slice(0, pattern.indexOf('/*'))
    return readdirSync(join(repoRoot, parent))
      .map((entry) => `${parent}/${entry}/package.json`)
      .filter((file) => globMatches(`${pattern}/package.json`, file) && existsSync(join(repoRoot, file)))
  })
}

/** Every file under a folder, as repo-relative paths, skipping node_modules. */
export function filesUnder(folder: string): string[] {
  const found: string[] = []
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else found.push(relative(repoRoot, path))
    }
  }
  if (existsSync(join(repoRoot, folder))) walk(join(repoRoot, folder))
  return found
}
