// Documentation is written, not pasted: a failing test run once landed in
// docs/semantic-conventions.md (a `✖ … failing tests:` report with its stack) and the doc test
// still passed, since it only looked for the tables it expects. The doc tests call this on every
// document they read, so such text fails them.

const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/^\s*[✖✔ℹ▶]\s/u, 'a node:test reporter line'],
  [/^\s*(not ok|ok) \d+ /, 'a TAP result line'],
  [/^\s*# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /, 'a TAP summary line'],
  [/failing tests:|test did not finish|test at \S+:\d+:\d+/, 'a test-runner report'],
  [/AssertionError|ERR_ASSERTION|Expected values to be strictly/, 'an assertion failure'],
  [/^\s+at (\S+ \()?(file:\/\/|node:|\/)\S*:\d+(:\d+)?\)?$/, 'a stack frame'],
  [/^\s*(errno|code|syscall): /, 'a Node error object'],
]

/** The lines of `text` that look like pasted test-runner or stack-trace output, as `line N: why: text`. */
export function pastedOutputLines(text: string): string[] {
  const found: string[] = []
  text.split('\n').forEach((line, i) => {
    const match = PATTERNS.find(([pattern]) => pattern.test(line))
    if (match) found.push(`line ${i + 1}: ${match[1]}: ${line.trim().slice(0, 120)}`)
  })
  return found
}
