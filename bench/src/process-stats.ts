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
  for (const pid of pids) {
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    } catch {
      continue
    }
    // The command name (field 2) may hold spaces; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticks / TICKS_PER_SECOND
}

/** Pids of every running process whose command name is exactly `name` (pgrep -x). */
export function pidsNamed(name: string): number[] {
  try {
    return execFileSync('pgrep', ['-x', name], { encoding: 'utf8' }).trim().split('\n').map(Number)
  } catch {
    return [] // pgrep exits 1 when nothing matches
  }
}
