import type { ScoreDataType } from '../database.ts'
import type { ScoreConfigDto } from './score-configs.repository.ts'

/** A score that does not fit its type or configuration; the message names where (`body/value: …`). */
export class ScoreValueError extends Error {
  override readonly name = 'ScoreValueError'
}

// What a score's value means, checked against the project's configuration of that name when it
// has one. Without a configuration, the JSON type says it: a number is numeric, true/false
// boolean, a string categorical (its label; no number to average).

export interface ScoreValue {
  dataType: ScoreDataType
  numericValue: number | null
  stringValue: string | null
  configId: string | null
}

const typeOfValue = (value: number | boolean | string): ScoreDataType =>
  typeof value === 'number' ? 'numeric' : typeof value === 'boolean' ? 'boolean' : 'categorical'

/**
 * The stored form of `value`, or a ScoreValueError naming what is wrong (`where` is the value's place in the
 * request, e.g. `body/value`). A boolean may also be sent as 1 or 0, a numeric score's value is a
 * finite number, a categorical one of the configuration's labels.
 */
export function scoreValue(value: number | boolean | string, declared: ScoreDataType | undefined, config: ScoreConfigDto | undefined, where = 'body/value'): ScoreValue {
  const dataType = config?.dataType ?? declared ?? typeOfValue(value)
  if (config && declared && declared !== config.dataType) {
    throw new ScoreValueError(`body/dataType: the score ${JSON.stringify(config.name)} is configured as ${config.dataType}, not ${declared}`)
  }
  const configId = config?.id ?? null
  switch (dataType) {
    case 'numeric': {
      if (typeof value !== 'number' || !Number.isFinite(value)) throw new ScoreValueError(`${where}: a numeric score takes a number, got ${JSON.stringify(value)}`)
      if (config?.minValue != null && value < config.minValue) throw new ScoreValueError(`${where}: ${value} is below ${config.minValue}, the minimum of ${JSON.stringify(config.name)}`)
      if (config?.maxValue != null && value > config.maxValue) throw new ScoreValueError(`${where}: ${value} is above ${config.maxValue}, the maximum of ${JSON.stringify(config.name)}`)
      return { dataType, numericValue: value, stringValue: null, configId }
    }
    case 'boolean': {
      const truth = value === true || value === 1 ? true : value === false || value === 0 ? false : undefined
      if (truth === undefined) throw new ScoreValueError(`${where}: a boolean score takes true or false (or 1 or 0), got ${JSON.stringify(value)}`)
      return { dataType, numericValue: truth ? 1 : 0, stringValue: String(truth), configId }
    }
    case 'categorical': {
      if (typeof value !== 'string' || value === '') throw new ScoreValueError(`${where}: a categorical score takes a category's label (a non-empty string), got ${JSON.stringify(value)}`)
      if (config === undefined) return { dataType, numericValue: null, stringValue: value, configId }
      const category = config.categories?.find((c) => c.label === value)
      if (category === undefined) {
        const labels = (config.categories ?? []).map((c) => JSON.stringify(c.label)).join(', ')
        throw new ScoreValueError(`${where}: ${JSON.stringify(value)} is not a category of ${JSON.stringify(config.name)} (${labels})`)
      }
      return { dataType, numericValue: category.value, stringValue: value, configId }
    }
  }
}
