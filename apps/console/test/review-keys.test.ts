import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ScoreConfig } from '../src/api/types.ts'
import { reviewOptions } from '../src/lib/review-keys.ts'

const config = (name: string, dataType: ScoreConfig['dataType'], extra: Partial<ScoreConfig> = {}): ScoreConfig => ({
  id: name, projectId: 'p', name, dataType, minValue: null, maxValue: null, categories: null, description: '', createdAt: '', ...extra,
})

describe('review keys', { timeout: 10_000 }, () => {
  it('numbers the values of every score configuration 1–9 in order', () => {
    const options = reviewOptions([
      config('correct', 'boolean'),
      config('tone', 'categorical', { categories: [{ label: 'rude', value: 0 }, { label: 'fine', value: 1 }] }),
      config('stars', 'numeric', { minValue: 1, maxValue: 5 }),
    ])
    assert.deepEqual(options.map((option) => [option.key, option.scoreName, option.value]), [
      ['1', 'correct', true], ['2', 'correct', false], ['3', 'tone', 'rude'], ['4', 'tone', 'fine'],
      ['5', 'stars', 1], ['6', 'stars', 2], ['7', 'stars', 3], ['8', 'stars', 4], ['9', 'stars', 5],
    ])
  })

  it('gives no key past the ninth value, and none to a wide or fractional numeric range', () => {
    assert.deepEqual(reviewOptions([config('score', 'numeric', { minValue: 0, maxValue: 100 }), config('x', 'numeric', { minValue: 0, maxValue: 0.5 })]), [])
    const many = reviewOptions([config('n', 'numeric', { minValue: 0, maxValue: 8 }), config('ok', 'boolean')])
    assert.deepEqual(many.map((option) => option.key), ['1', '2', '3', '4', '5', '6', '7', '8', '9', '', ''])
  })
})
