import { fileURLToPath } from 'node:url'
import { strippedSourcesDirectory as strippedSourcesUrl } from '@tracewell/service/stripped-sources-directory'

/**
 * The Node flags the services run with (the npm start scripts and the image's ENTRYPOINT): every
 * server a benchmark starts, ceilings included, gets the same, so ratios compare like with like
 * and peak RSS is what an operator would see. `--no-parallel-scavenge`: a young-generation
 * collection of at most 8 MiB runs on the main thread alone; its helper threads bought shorter
 * pauses with CPU that busy cores did not have (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
 */
export const serviceNodeFlags = ['--max-semi-space-size=8', '--no-parallel-scavenge', '--heap-growing-percent=50']

/**
 * How the npm start scripts run a service from its TypeScript sources (the image's bundles need
 * neither): with the hook that keeps each module's stripped text on disk, so that a later start
 * never loads Node's type stripper, and the directory it keeps them in (the hook's own).
 */
export const typescriptSourcesFlags = ['--import', '@tracewell/service/typescript-sources']
export const strippedSourcesDirectory = fileURLToPath(strippedSourcesUrl)

/**
 * The writer's own, given after those (a later V8 flag wins). Its garbage is mostly 150 KB body
 * strings, which V8 allocates in the old generation: letting that grow to twice the live heap
 * between full collections instead of 1.5× took a sixth off its CPU per span
 * (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
 */
export const writerNodeFlags = ['--heap-growing-percent=100']

/**
 * Flags to try against the services' own, for a run that compares them (alternate runs with and
 * without): BENCH_NODE_FLAGS after every server's flags, BENCH_WRITER_NODE_FLAGS after the
 * writer's and BENCH_INGEST_NODE_FLAGS after ingest's, e.g.
 * `BENCH_WRITER_NODE_FLAGS=--max-semi-space-size=4 npm run bench:ingest`. Each is split on spaces;
 * a later V8 flag wins. The benchmarks print them when set.
 */
const flagsFromEnv = (name: string): string[] => (process.env[name] ?? '').split(' ').filter((flag) => flag !== '')
export const triedNodeFlags = flagsFromEnv('BENCH_NODE_FLAGS')
export const triedWriterNodeFlags = flagsFromEnv('BENCH_WRITER_NODE_FLAGS')
export const triedIngestNodeFlags = flagsFromEnv('BENCH_INGEST_NODE_FLAGS')

/** The flags every server a benchmark starts runs with: the services', then any tried ones. */
export const benchNodeFlags = [...serviceNodeFlags, ...triedNodeFlags]

/** The flags of the service at `entry` (a path under the repository, e.g. apps/writer/src/server.ts). */
export const nodeFlagsOf = (entry: string): string[] =>
  entry.startsWith('apps/writer/') ? [...benchNodeFlags, ...writerNodeFlags, ...triedWriterNodeFlags]
    : entry.startsWith('apps/ingest/') ? [...benchNodeFlags, ...triedIngestNodeFlags]
      : benchNodeFlags
