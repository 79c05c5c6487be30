import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { JudgeError, judgmentOf } from '../src/judge.client.ts'

describe('the judge’s answer', () => {
  it('reads {score, reasoning}, in a code fence too, and refuses anything else as retryable', () => {
    assert.deepEqual(judgmentOf('{"score": 0.5, "reasoning": "half right"}'), { score: 0.5, reasoning: 'half right' })
    assert.deepEqual(judgmentOf('```json\n{"score": "1", "reasoning": "ok"}\n```'), { score: 1, reasoning: 'ok' })
    assert.deepEqual(judgmentOf('{"score": 3}'), { score: 3, reasoning: '' })
    for (const answer of ['Score: 1', '{"score": "high"}', '{"reasoning": "no score"}', '[1]']) {
      assert.throws(() => judgmentOf(answer), (error: unknown) => error instanceof JudgeError && error.retryable, answer)
    }
  })
})
