import type { ScoreConfig } from '../api/types.ts'

/** One value a reviewer can give with one key press. */
export interface ReviewOption {
  key: string
  scoreName: string
  label: string
  value: number | boolean | string
}

/**
 * The values of a queue's score configurations, numbered 1–9 across them in order: thumbs up and
 * down, each category, or each whole number of a numeric range of at most nine. Values past the
 * ninth (and wider ranges) are given with the mouse.
 */
export function reviewOptions(configs: readonly ScoreConfig[]): ReviewOption[] {
  const options: Omit<ReviewOption, 'key'>[] = []
  for (const config of configs) {
    if (config.dataType === 'boolean') {
      options.push({ scoreName: config.name, label: 'Yes', value: true }, { scoreName: config.name, label: 'No', value: false })
    } else if (config.dataType === 'categorical') {
      for (const category of config.categories ?? []) options.push({ scoreName: config.name, label: category.label, value: category.label })
    } else if (config.minValue !== null && config.maxValue !== null && Number.isInteger(config.minValue) && Number.isInteger(config.maxValue) && config.maxValue - config.minValue < 9) {
      for (let value = config.minValue; value <= config.maxValue; value++) options.push({ scoreName: config.name, label: String(value), value })
    }
  }
  return options.map((option, index) => ({ ...option, key: index < 9 ? String(index + 1) : '' }))
}
