import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { columnsThatFit, type ColumnNeed } from '../src/components/grid-columns.ts'

const columns: ColumnNeed[] = [
  { id: 'time', minPx: 160, priority: 1 },
  { id: 'name', minPx: 140, priority: 1 },
  { id: 'service', minPx: 110, priority: 3 },
  { id: 'duration', minPx: 80, priority: 2 },
  { id: 'spans', minPx: 60, priority: 3 },
  { id: 'status', minPx: 80, priority: 1 },
]

describe('columns that fit a grid', { timeout: 10_000 }, () => {
  it('shows every column while they fit, and before the grid is laid out', () => {
    assert.deepEqual(columnsThatFit(columns, 700), { shown: ['time', 'name', 'service', 'duration', 'spans', 'status'], hidden: [] })
    assert.deepEqual(columnsThatFit(columns, 0).hidden, [])
  })

  it('puts priority-3 columns away first, from the right, then priority 2; never priority 1', () => {
    assert.deepEqual(columnsThatFit(columns, 600), { shown: ['time', 'name', 'service', 'duration', 'status'], hidden: ['spans'] })
    assert.deepEqual(columnsThatFit(columns, 470), { shown: ['time', 'name', 'duration', 'status'], hidden: ['service', 'spans'] })
    assert.deepEqual(columnsThatFit(columns, 390), { shown: ['time', 'name', 'status'], hidden: ['service', 'duration', 'spans'] })
    assert.deepEqual(columnsThatFit(columns, 100).shown, ['time', 'name', 'status'])
  })
})
