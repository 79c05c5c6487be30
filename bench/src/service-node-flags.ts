/**
 * The Node flags the services run with (the npm start scripts and the image's ENTRYPOINT): every
 * server a benchmark starts, ceilings included, gets the same, so ratios compare like with like
 * and peak RSS is what an operator would see.
 */
export const serviceNodeFlags = ['--max-semi-space-size=8', '--heap-growing-percent=50']

/**
 * The writer's own, given after those (a later V8 flag wins). Its garbage is mostly 150 KB body
 * strings, which V8 allocates in the old generation: letting that grow to twice the live heap
 * between full collections instead of 1.5× took 17% off its CPU per span (docs/benchmarks.md).
 */
export const writerNodeFlags = ['--heap-growing-percent=100']

/** The flags of the service at `entry` (a path under the repository, e.g. apps/writer/src/server.ts). */
export const nodeFlagsOf = (entry: string): string[] => (entry.startsWith('apps/writer/') ? [...serviceNodeFlags, ...writerNodeFlags] : serviceNodeFlags)
