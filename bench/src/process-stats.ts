// What the benchmarks read about the processes they measure, from /proc (Linux only, like the
// rest of bench/): peak memory, CPU time, and which processes are Postgres and Redis.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

/** Peak resident set size of a process (VmHWM), in MiB. */
export function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN)
  return kib / 1024
}

// Linux reports CPU time in clock ticks of 1/100 s (USER_HZ) on every architecture Node runs on.
const TICKS_PER_SECOND = 100

/** User plus system CPU seconds used so far by the processes; one that has exited counts 0. */
export function cpuSeconds(pids: readonly number[]): number {
  let ticks = 0
  for (const pid of pids) ticks += ticksOf(pid)?.own ?? 0
  return ticks / TICKS_PER_SECOND
}

/**
 * CPU seconds used so far by a server of processes all named `name` (Postgres: the postmaster and
 * its backends; Redis), those that have exited included. The processes are listed afresh at each
 * call, and an exited one is counted through its parent: a backend's CPU moves into the
 * postmaster's "children" times when it is reaped. A list taken once before a measurement counted
 * a backend that exited during it (a writer's pool closes idle connections) with less CPU after
 * than before, and one that started during it not at all: a drain of 100-span traces once showed
 * Postgres at a fraction of what it spends (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).
 */
export function serverCpuSeconds(name: string): number {
  const root = serverRoots.get(name)
  const named = pidsNamed(name)
  const pids = root === undefined ? named : named.filter((pid) => pid === root || parentOf(pid) === root)
  const ofServer = new Set(pids)
  let ticks = 0
  for (const pid of pids) {
    const read = ticksOf(pid)
    if (read === undefined) continue
    ticks += read.own
    // The server's root (the postmaster) holds the CPU of the children it has reaped.
    if (!ofServer.has(read.parent)) ticks += read.reapedChildren
  }
  return ticks / TICKS_PER_SECOND
}

/**
 * Root process (the postmaster; redis-server itself) of the server a benchmark uses, by command
 * name: serverCpuSeconds then counts that server alone. Without it, every process of the name
 * counts, and on a machine whose Postgres other runs share, their statements counted as the
 * benchmark's (a one-span drain once showed Postgres at 608 µs a span against the 154 it spent alone).
 */
const serverRoots = new Map<string, number>()

/** Counts only the server whose root process is `rootPid` (and its children) under `name`. */
export function scopeServer(name: string, rootPid: number): void {
  serverRoots.set(name, rootPid)
}

/** The parent of a running process, or undefined once it has exited. */
export function parentOf(pid: number): number | undefined {
  return ticksOf(pid)?.parent
}

/** A process's CPU ticks from /proc/<pid>/stat, or undefined once it has exited. */
function ticksOf(pid: number): { own: number; reapedChildren: number; parent: number } | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name (field 2) may hold spaces; after it come ppid (field 4), utime, stime,
  // cutime and cstime (fields 14 to 17).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { parent: Number(fields[1]), own: Number(fields[11]) + Number(fields[12]), reapedChildren: Number(fields[13]) + Number(fields[14]) }
}

/** Pids of every running process whose command name is exactly `name` (pgrep -x). */
function pidsNamed(name: string): number[] {
  try {
    return execFileSync('pgrep', ['-x', name], { encoding: 'utf8' }).trim().split('\n').map(Number)
  } catch {
    return [] // pgrep exits 1 when nothing matches
  }
}
