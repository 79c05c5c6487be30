import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

// The summariser thread is an isolate of its own: each module it loads is held a second time
// beside the writer's, and its heap grows to twice what it holds (the writer's peak RSS,
// docs/benchmarks.md). It folds deltas, so it must not load what decodes or counts spans.
const threadModule = fileURLToPath(new URL('../src/summariser.thread.ts', import.meta.url))
const recordLoads = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from 'node:module'
registerHooks({ load(url, context, next) { process.stdout.write(url + '\\n'); return next(url, context) } })
`)}`

test('the summariser thread loads neither the span decoders nor the metrics library', () => {
  // Imported outside a thread, the module throws once its imports are loaded: they are what is asked.
  const script = `await import(${JSON.stringify(threadModule)}).catch(() => {})`
  const loaded = execFileSync(process.execPath, ['--import', '@tracewell/service/typescript-sources', '--import', recordLoads, '--input-type=module', '-e', script], { encoding: 'utf8' }).split('\n')
  assert.ok(loaded.some((url) => url.includes('/packages/write-path/src/summary-fold.ts')), 'the fold is loaded')
  const unwanted = loaded.filter((url) => /\/packages\/(otlp|llm-usage)\/src\/index\.ts$|\/node_modules\/(protobufjs|prom-client)\//.test(url))
  assert.deepEqual(unwanted, [])
})
