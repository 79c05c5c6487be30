import type { ValidateFunction } from 'ajv'

// Postgres text and jsonb cannot hold the NUL character: a name, tag, prompt, variable or query
// value containing \u0000 failed in the INSERT or SELECT with a 500. Every part of every
// control-plane request passes through its validator, so that is where it is refused, as a 400
// in the shape of any other validation error (`body/tags/0: …`).

const NUL = '\u0000'
const problem = 'must not contain the NUL character (\\u0000)'

/** `validate`, refusing first any string or object key, at any depth, that contains NUL. */
export function refusingNul(validate: ValidateFunction): ValidateFunction {
  const wrapped = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    const at = nulPath(data, '')
    if (at !== null) {
      wrapped.errors = [{ instancePath: at, schemaPath: '', keyword: 'nul', params: {}, message: problem }]
      return false
    }
    const valid = validate(data, context)
    wrapped.errors = validate.errors
    return valid
  }) as ValidateFunction
  // Fastify hands Ajv's own functions their parent object, so that they may coerce the root value.
  Object.assign(wrapped, { schema: validate.schema, schemaEnv: validate.schemaEnv })
  return wrapped
}

/** The JSON pointer of the first string or key holding NUL, or null. */
function nulPath(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes(NUL) ? path : null
  if (typeof value !== 'object' || value === null) return null
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i], `${path}/${i}`)
      if (found !== null) return found
    }
    return null
  }
  for (const [key, child] of Object.entries(value)) {
    const childPath = `${path}/${escapePointer(key)}`
    if (key.includes(NUL)) return childPath
    const found = nulPath(child, childPath)
    if (found !== null) return found
  }
  return null
}

// RFC 6901; the NUL itself is shown escaped, so the message stays printable.
const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1').replaceAll(NUL, '\\u0000')
