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
  checkOneOfRules(schema, raw)
  checkSettingValues(schema, converted as Record<string, unknown>)
  return converted as Static<T>
}

/**
 * Settings whose value a schema cannot check (a JSON document validated by the code that runs it):
 * a schema names them in its `settingChecks` option, each with a function that throws the reason.
 */
function checkSettingValues(schema: TObject, config: Record<string, unknown>): void {
  const { settingChecks } = schema as TObject & { settingChecks?: Record<string, (value: unknown) => void> }
  for (const [name, check] of Object.entries(settingChecks ?? {})) {
    try {
      check(config[name])
    } catch (error) {
      throw new ConfigError(`${name} is invalid: ${(error as Error).message}`)
    }
  }
}

/**
 * Settings that stand for one another (REDIS_URL or REDIS_CLUSTER_NODES): a schema names them in
 * its `exactlyOneOf` (one is required) or `atMostOneOf` (both are optional) option.
 */
function checkOneOfRules(schema: TObject, raw: Record<string, unknown>): void {
  const { exactlyOneOf, atMostOneOf } = schema as TObject & { exactlyOneOf?: readonly string[]; atMostOneOf?: readonly string[] }
  const names = exactlyOneOf ?? atMostOneOf
  if (!names) return
  const set = names.filter((name) => raw[name] !== undefined)
  if (set.length > 1) throw new ConfigError(`${set.join(' and ')} are both set: set only one of them`)
  if (set.length === 0 && exactlyOneOf) {
    const described = names.map((name) => `${name} (${schema.properties[name]?.description ?? ''})`).join(' or ')
    throw new ConfigError(`${names.join(' or ')} is required: ${described}`)
  }
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
