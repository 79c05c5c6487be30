import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repoRoot } from './processes.ts'

/**
 * `redocly lint` (the repository's redocly.yaml: the recommended rules) on an OpenAPI document:
 * its output when it reports any error or warning, null when the document is clean.
 */
export function redoclyProblems(document: string): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'tracewell-openapi-'))
  try {
    const file = join(dir, 'openapi.json')
    writeFileSync(file, document)
    const result = spawnSync(join(repoRoot, 'node_modules/.bin/redocly'), ['lint', file, '--config', join(repoRoot, 'redocly.yaml'), '--format=stylish'], {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    })
    const output = `${result.stdout}${result.stderr}`
    return result.status === 0 && !/\bwarnings?\b/.test(output.replace(/You have 0 warnings/, '')) ? null : output
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
