import { spawnSync } from 'node:child_process'

/**
 * `promtool check metrics` on a scrape: its complaints, one per line (none when the scrape is
 * clean). promtool comes with Debian's `prometheus` package, which .ci/run installs.
 */
export function promtoolComplaints(scrape: string): string[] {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: scrape, encoding: 'utf8' })
  if (result.error) throw new Error(`promtool could not run (${result.error.message}): install Debian's prometheus package`)
  return `${result.stdout}${result.stderr}`.split('\n').filter((line) => line.trim() !== '')
}

/** Metric families in a scrape (its `# TYPE` lines) that are not Node's standard process metrics. */
export function ownMetricNames(scrape: string): string[] {
  return [...scrape.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1] as string).filter((name) => !/^(process|nodejs)_/.test(name))
}
