import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { authorText, evaluatorOf } from '../src/lib/score-format.ts'

describe('who gave a score, as the console names them', () => {
  const names = new Map([['e1', 'helpfulness']])
  const judged = { author: 'evaluator:e1', evaluatorId: 'e1', evaluatorName: null }

  it('names a judge by its evaluator: the server’s name, else the project’s list, else a deleted one', () => {
    assert.equal(authorText({ ...judged, evaluatorName: 'tone' }, names), 'tone')
    assert.equal(authorText(judged, names), 'helpfulness')
    // Scores stored before evaluatorId was kept name the judge only in their author.
    assert.equal(authorText({ author: 'evaluator:e1', evaluatorId: null, evaluatorName: null }, names), 'helpfulness')
    assert.equal(authorText({ author: 'evaluator:gone', evaluatorId: 'gone', evaluatorName: null }, names), 'a deleted evaluator')
    assert.equal(evaluatorOf({ author: 'evaluator:e1', evaluatorId: null }), 'e1')
  })

  it('shows who a person or an SDK said, and leaves a key’s id to the tooltip', () => {
    assert.equal(authorText({ author: 'ana@example.com', evaluatorId: null, evaluatorName: null }, names), 'ana@example.com')
    assert.equal(authorText({ author: 'key:k1', evaluatorId: null, evaluatorName: null }, names), null)
    assert.equal(authorText({ author: null, evaluatorId: null, evaluatorName: null }, names), null)
    assert.equal(evaluatorOf({ author: 'key:k1', evaluatorId: null }), null)
  })
})
