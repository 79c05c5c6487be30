import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { BodyBudget } from '../src/body-budget.ts'

/** Whether `promise` has settled by the end of this turn's microtasks. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  void promise.then(() => (done = true))
  await new Promise((resolve) => setImmediate(resolve))
  return done
}

describe('the body budget of the jobs a writer holds', { timeout: 10_000 }, () => {
  test('holds no more than its limit, and lets the waiting jobs in, in order, as bytes are given back', async () => {
    const budget = new BodyBudget(100)
    const first = await budget.take(60)
    const second = budget.take(30)
    assert.equal(await settled(second), true, '60 + 30 fit in 100')
    const third = budget.take(20)
    const fourth = budget.take(5)
    assert.equal(await settled(third), false, '110 would not fit')
    assert.equal(await settled(fourth), false, 'a later job does not overtake a waiting one, even if it would fit')
    first()
    assert.equal(await settled(third), true)
    assert.equal(await settled(fourth), true)
    assert.equal(budget.heldBytes, 30 + 20 + 5)
  })

  test("lets a light project's job in ahead of the others waiting", async () => {
    const budget = new BodyBudget(100)
    const flood = await budget.take(100)
    const order: string[] = []
    const waiting = [budget.take(50).then(() => order.push('usual 1')), budget.take(50).then(() => order.push('usual 2')), budget.take(10, true).then(() => order.push('express'))]
    flood()
    await Promise.all(waiting.slice(0, 1).concat(waiting.slice(2)))
    assert.deepEqual(order, ['express', 'usual 1'])
    assert.equal(budget.heldBytes, 60)
  })

  test('takes a job larger than the whole budget alone, once nothing else is held', async () => {
    const budget = new BodyBudget(100)
    const small = await budget.take(10)
    const large = budget.take(500)
    assert.equal(await settled(large), false)
    small()
    const giveLarge = await large
    assert.equal(budget.heldBytes, 500)
    const after = budget.take(1)
    assert.equal(await settled(after), false, 'nothing beside the large job')
    giveLarge()
    giveLarge() // given back twice: counted once
    await after
    assert.equal(budget.heldBytes, 1)
  })
})
