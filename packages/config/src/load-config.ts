import type { Static, TObject } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

/** A setting is missing or malformed; the message is one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * Validates the environment against a service's settings schema, once, at start-up. Values are
 * converted from strings (numbers, booleans), defaults filled in, and empty strings treated as
 * unset so that `FOO=` in a compose file means "use the default".
 */
export function loadConfig<T extends TObject>(schema: T, env: Record<string, string | undefined> = process.env): Static<T> {
  const raw: Record<string, unknown> = {}
  for (const name of Object.keys(schema.properties)) {
    const value = env[name]
    if (value !== undefined && value !== '') raw[name] = value
  }
  const converted = Value.Convert(schema, Value.Default(schema, raw))
  const firstError = Value.Errors(schema, converted).First()
  if (firstError) {
    const name = firstError.path.split('/')[1] ?? firstError.path
    const setting = schema.properties[name]
    const expected = setting?.description ?? firstError.message
    const problem = raw[name] === undefined ? 'is required' : `is invalid (${firstError.message})`
    throw new ConfigError(`${name} ${problem}: ${expected}`)
  }
  return converted as Static<T>
}

/** For a process's entry point: on a bad setting, print the one line and exit. */
export function loadConfigOrExit<T extends TObject>(schema: T): Static<T> {
  try {
    return loadConfig(schema)
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`)
      process.exit(78) // EX_CONFIG
    }
    throw error
  }
}
