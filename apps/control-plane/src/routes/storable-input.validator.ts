import type { ValidateFunction } from 'ajv'

// Input that parses as JSON, and that the route's schema may take (a dataset item's input is any
// JSON), but that Postgres cannot store: a NUL character in text or jsonb, a lone UTF-16
// surrogate (`"\ud800"`: jsonb refuses its escape, text turns it into U+FFFD), and values nested
// thousands deep (jsonb's parser runs out of stack). Each failed in the INSERT with a 500. Every
// part of every control-plane request passes through its validator, so that is where they are
// refused, as a 400 in the shape of any other validation error (`body/input/0: …`).

const NUL = '\u0000'
/** How deep arrays and objects may sit within each other: far past any real payload, far short of Postgres's stack. */
export const MAX_JSON_DEPTH = 100
/** Segments of a path shown in a message: a too-deep value's full path would be MAX_JSON_DEPTH long. */
const SHOWN_SEGMENTS = 4

const problems = {
  nul: 'must not contain the NUL character (\\u0000)',
  surrogate: 'must not contain a lone UTF-16 surrogate (\\ud800–\\udfff); send well-formed Unicode',
  depth: `nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`,
} as const
type Problem = keyof typeof problems

/** Whether a validation error is one of these refusals (a route checking its own union reports them as they are). */
export const isUnstorableKeyword = (keyword: string | undefined): boolean => keyword !== undefined && Object.hasOwn(problems, keyword)

/**
 * The validator `compile` makes, refusing first any string or object key, at any depth, that
 * Postgres cannot store, and values nested too deep. Compiled on the route's first request, not
 * at start: an install uses a fraction of the routes, and all compiled at start held 2–3 MiB
 * for good (docs/benchmarks.md, "validators compiled on first use"). route-validators.test.ts
 * compiles every route's, so a schema Ajv refuses still fails the tests, not a first request.
 */
export function refusingUnstorable(compile: () => ValidateFunction): ValidateFunction {
  let validate: ValidateFunction | undefined
  const wrapped = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    const found = unstorable(data, [], 0)
    if (found !== null) {
      wrapped.errors = [{ instancePath: pointer(found.path), schemaPath: '', keyword: found.problem, params: {}, message: problems[found.problem] }]
      return false
    }
    validate ??= compile()
    const valid = validate(data, context)
    wrapped.errors = validate.errors
    return valid
  }) as ValidateFunction
  // Fastify hands a validator with a schemaEnv its parent object, so that Ajv may coerce the root
  // value: every one is told to, as its compiled function does not exist yet.
  Object.assign(wrapped, { schemaEnv: {} })
  return wrapped
}

/** `body/…: why` for a value that cannot be stored, as the validator words it; null when it can be. */
export function unstorableMessage(value: unknown, part = 'body'): string | null {
  const found = unstorable(value, [], 0)
  return found === null ? null : `${part}${pointer(found.path)}: ${problems[found.problem]}`
}

/** The first string, key or container that cannot be stored, with where it is; null when all can. */
function unstorable(value: unknown, path: string[], depth: number): { path: string[]; problem: Problem } | null {
  if (typeof value === 'string') {
    const problem = textProblem(value)
    return problem === null ? null : { path, problem }
  }
  if (typeof value !== 'object' || value === null) return null
  // Stops descending at the limit: a value nested 500,000 deep is refused without walking it.
  if (depth >= MAX_JSON_DEPTH) return { path, problem: 'depth' }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorable(value[i], [...path, String(i)], depth + 1)
      if (found !== null) return found
    }
    return null
  }
  for (const [key, child] of Object.entries(value)) {
    const keyProblem = textProblem(key)
    if (keyProblem !== null) return { path: [...path, key], problem: keyProblem }
    const found = unstorable(child, [...path, key], depth + 1)
    if (found !== null) return found
  }
  return null
}

function textProblem(text: string): Problem | null {
  if (text.includes(NUL)) return 'nul'
  if (!text.isWellFormed()) return 'surrogate'
  return null
}

/** An RFC 6901 pointer, the first segments only when long; NUL and lone surrogates shown escaped, so the message stays printable. */
function pointer(path: string[]): string {
  const shown = path.length > SHOWN_SEGMENTS ? [...path.slice(0, SHOWN_SEGMENTS), '…'] : path
  return shown.map((segment) => `/${escapeSegment(segment)}`).join('')
}

const escapeSegment = (segment: string) =>
  segment
    .replaceAll('~', '~0')
    .replaceAll('/', '~1')
    .replaceAll(NUL, '\\u0000')
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16)}`)
