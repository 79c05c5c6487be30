import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createInProcessEvaluationQueue } from '../src/evaluation-queue.ts'
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

describe('the in-process evaluations queue', () => {
  const logger = { warn() {}, error() {} }

  it('retries with doubling backoff until the last attempt, then stops; a non-retryable error stops at once', async () => {
    const calls: Array<[string, boolean, number]> = []
    const started = Date.now()
    const queue = createInProcessEvaluationQueue({
      concurrency: 1,
      maxAttempts: 3,
      backoffMs: 50,
      logger,
      judge: async (jobId, final) => {
        calls.push([jobId, final, Date.now() - started])
        throw new JudgeError('down', jobId !== 'fatal')
      },
    })
    await queue.add(['flaky', 'fatal', 'flaky'])
    await new Promise((resolve) => setTimeout(resolve, 400))
    await queue.close()
    assert.deepEqual(calls.map(([jobId, final]) => [jobId, final]), [['flaky', false], ['fatal', false], ['flaky', false], ['flaky', true]])
    const flakyTimes = calls.filter(([jobId]) => jobId === 'flaky').map(([, , at]) => at)
    assert.ok((flakyTimes[1] as number) - (flakyTimes[0] as number) >= 45 && (flakyTimes[2] as number) - (flakyTimes[1] as number) >= 95, String(flakyTimes))
  })

  it('runs at most `concurrency` judgments at once', async () => {
    let running = 0
    let most = 0
    const queue = createInProcessEvaluationQueue({
      concurrency: 2,
      maxAttempts: 1,
      backoffMs: 10,
      logger,
      judge: async () => {
        most = Math.max(most, ++running)
        await new Promise((resolve) => setTimeout(resolve, 20))
        running--
      },
    })
    await queue.add(['a', 'b', 'c', 'd', 'e'])
    await new Promise((resolve) => setTimeout(resolve, 150))
    await queue.close()
    assert.equal(most, 2)
  })
})
