// `node --import @tracewell/service/typescript-sources`, as the start scripts run a service from
// its TypeScript sources: each .ts module is type-stripped once and the stripped text kept on
// disk, so a later start strips nothing and never loads Node's stripper (a WebAssembly module that
// stays in memory). Node's own compile cache (NODE_COMPILE_CACHE) does that too, but it holds
// every module's cached bytecode in native memory for the life of the process: ~10 MiB of an idle
// service, more than compiling again costs (docs/benchmarks.md#at-rest). Plain JavaScript, so
// that loading it strips nothing; worker threads inherit the flag, and with it the hook.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { registerHooks, stripTypeScriptTypes } from 'node:module'
import process from 'node:process'
import { URL } from 'node:url'
import { threadId } from 'node:worker_threads'
import { strippedSourcesDirectory } from './stripped-sources-directory.mjs'

/** What Node's loader calls a TypeScript module, and what it is once stripped. */
const strippedFormats = { 'module-typescript': 'module', 'commonjs-typescript': 'commonjs' }

/** Names what is done to a source besides stripping, so that entries made otherwise are not read. */
const recipe = 'latin1-escapes'

// Whitespace and line terminators past Latin-1, which escaped would no longer be whitespace.
const unicodeWhitespace = /[\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/

registerHooks({
  load(url, context, nextLoad) {
    const loaded = nextLoad(url, context)
    const format = strippedFormats[loaded.format]
    // Node refuses to strip a package's TypeScript under node_modules: left to it, it still does.
    if (format === undefined || url.includes('/node_modules/')) return loaded
    return { format, source: strippedOnce(String(loaded.source)) }
  },
})

/** `source` without its types, from the directory when an earlier start stripped the same text. */
function strippedOnce(source) {
  const entry = new URL(`${createHash('sha256').update(process.version).update(recipe).update(source).digest('base64url')}.js`, strippedSourcesDirectory)
  try {
    return readFileSync(entry, 'utf8')
  } catch {
    const stripped = latin1(withoutExperimentalWarning(() => stripTypeScriptTypes(source, { mode: 'strip' })))
    keep(entry, stripped)
    return stripped
  }
}

/** Writes the entry whole or not at all (processes and threads starting together may write the same one); a directory it cannot write only means stripping again next time. */
function keep(entry, stripped) {
  const partial = new URL(`${entry.href}.${process.pid}-${threadId}`)
  try {
    mkdirSync(strippedSourcesDirectory, { recursive: true })
    writeFileSync(partial, stripped)
    renameSync(partial, entry)
  } catch {
    // Not kept: the next start strips this module again.
  }
}

/**
 * `text` with every character past Latin-1 written as a \uXXXX escape. V8 keeps a module's source
 * for its whole life, two bytes a character if a single one (an em dash in a comment, say) is past
 * Latin-1: most of our sources are, and escaped they take half (docs/benchmarks.md#at-rest). An
 * escape means the same character in a string, template, regular expression or identifier, and
 * nothing in a comment; only a tagged template's raw text would differ, and columns on those lines
 * shift in stack traces. A source with such whitespace is left as it is.
 */
function latin1(text) {
  if (!/[\u0100-\uffff]/.test(text) || unicodeWhitespace.test(text)) return text
  // After an odd run of backslashes the character was already escaped (`\—` is `—`): its
  // backslash becomes the escape's own.
  return text.replace(/(\\*)([\u0100-\uffff])/g, (_, slashes, char) => `${slashes}${slashes.length % 2 === 1 ? '' : '\\'}u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

// stripTypeScriptTypes warns that it is experimental; the loader's own stripping, which it stands
// in for, does not. Silenced for that one call only, so a start after a change says nothing new.
function withoutExperimentalWarning(strip) {
  const { emitWarning } = process
  process.emitWarning = (warning, ...rest) => {
    if (!/stripTypeScriptTypes/.test(String(warning))) emitWarning.call(process, warning, ...rest)
  }
  try {
    return strip()
  } finally {
    process.emitWarning = emitWarning
  }
}
