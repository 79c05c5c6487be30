import type * as OpenAIPackage from 'openai'

// The `openai` package is imported by the first call to a model, not when a service starts: it
// weighs on a control plane at rest, and most control planes never call a model
// (docs/benchmarks.md#figures-behind-code-comments-2026-12-06).

let imported: typeof OpenAIPackage | undefined
let importing: Promise<typeof OpenAIPackage> | undefined

/** The `openai` package, imported once (again after a failed import). */
export function importOpenAI(): Promise<typeof OpenAIPackage> {
  importing ??= import('openai').then(
    (openai) => (imported = openai),
    (error: unknown) => {
      importing = undefined
      throw error
    },
  )
  return importing
}

/** The package once a call has imported it: only then can an error be one of its classes. */
export function openAIIfImported(): typeof OpenAIPackage | undefined {
  return imported
}
