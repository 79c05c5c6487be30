import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { hashPassword } from '@tracewell/auth'
import { addAnnotationQueueItems, createAnnotationQueue, createScoreConfig, createUser, putTeamMember } from '@tracewell/db'
import { eventuallyEqual, screenshot } from '../support/browser.ts'
import { assertNoProblems, signedInPerson } from '../support/console-session.ts'
import { consoleFixture } from '../support/console-fixture.ts'
import { seedScenario } from '../support/scenario.ts'

// Issue 47 in the browser: a reviewer works a queue by keyboard alone (a value key, Enter to
// complete and take the next, S to skip), and people discuss a trace in its comments, a mention
// shown as the person's name.

const password = 'correct horse battery staple'

describe('reviewing and discussing traces', () => {
  const fx = consoleFixture(async (stack) => {
    const scenario = await seedScenario(stack.url, stack.projectKey)
    const db = stack.database.db
    const team = await db.selectFrom('teams').select('id').where('name', '=', 'Acme AI').executeTakeFirstOrThrow()
    const hash = await hashPassword(password)
    const people: Record<string, string> = {}
    for (const [email, name] of [['ada@acme.example', 'Ada Lovelace'], ['grace@acme.example', 'Grace Hopper']] as const) {
      const user = await createUser(db, { email, name, passwordHash: hash, emailVerified: true })
      if (!user) throw new Error(`${email} exists`)
      await putTeamMember(db, team.id, user.id, 'member')
      people[email] = user.id
    }
    const correct = await createScoreConfig(db, { projectId: stack.projectId, name: 'correct', dataType: 'boolean' })
    const queue = await createAnnotationQueue(db, stack.projectId, { name: 'Support answers', description: '', scoreConfigIds: [correct.id], assigneeIds: [] }, null)
    await addAnnotationQueueItems(db, queue.id, 'trace', scenario.supportTraceIds)
    return { scenario, queueId: queue.id, graceId: people['grace@acme.example'] as string }
  })

  it('works a queue by keyboard: a value key scores, Enter completes and takes the next, S skips', async () => {
    const opened = await signedInPerson(fx.browser, fx.stack, 'ada@acme.example', password)
    const { page } = opened
    const { scenario, queueId } = fx.seeded
    await page.goto(`/annotation-queues/${queueId}?project_id=${fx.stack.projectId}`)
    await page.getByRole('group', { name: 'Scores to give' }).waitFor()
    await page.locator('.waterfall-row').first().waitFor()
    await screenshot(page, 'review-item')

    await page.keyboard.press('1')
    await page.getByRole('button', { name: /\bYes$/, pressed: true }).waitFor()
    const scoresToGive = page.getByRole('group', { name: 'Scores to give' })
    await page.keyboard.press('Enter')
    await page.getByText('1 of 3 done').waitFor()
    // Each move takes the item off the page until the next arrives, so keys never act on the last.
    await scoresToGive.waitFor()
    await page.keyboard.press('s')
    await scoresToGive.waitFor()
    await page.keyboard.press('2')
    await page.getByRole('button', { name: /\bNo$/, pressed: true }).waitFor()
    await page.keyboard.press('Enter')
    await page.getByText('2 of 3 done').waitFor()

    const db = fx.stack.database.db
    const scores = await eventuallyEqual(
      // A boolean score is stored as 1 or 0.
      async () => (await db.selectFrom('scores').select(['trace_id', 'value']).where('project_id', '=', fx.stack.projectId).where('name', '=', 'correct').orderBy('value', 'desc').execute()).map((row) => [row.trace_id, row.value]),
      [[scenario.supportTraceIds[0] as string, 1], [scenario.supportTraceIds[2] as string, 0]],
    )
    assert.equal(scores.length, 2, 'the skipped trace has no score yet')
    const items = await db.selectFrom('annotation_queue_items').select(['object_id', 'status']).where('queue_id', '=', queueId).orderBy('position').execute()
    assert.deepEqual(items.map((item) => [item.object_id, item.status]), [
      [scenario.supportTraceIds[0], 'completed'],
      [scenario.supportTraceIds[2], 'completed'],
      [scenario.supportTraceIds[1], 'pending'],
    ], 'the skipped item went to the back')
    await screenshot(page, 'review-after')
    assertNoProblems(opened)
    await opened.context.close()
  })

  it('discusses a trace: a comment with a mention, shown by name, a reply, and the thread resolved', async () => {
    const opened = await signedInPerson(fx.browser, fx.stack, 'ada@acme.example', password)
    const { page } = opened
    await page.goto(`/traces/${fx.seeded.scenario.billingTraceId}?project_id=${fx.stack.projectId}`)
    await page.getByRole('region', { name: 'Comments' }).waitFor()
    await page.getByLabel('New comment').fill(`Why **429**? @[Grace Hopper](user:${fx.seeded.graceId}) <script>alert(1)</script>`)
    await page.getByRole('button', { name: 'Comment', exact: true }).click()
    const thread = page.getByRole('article', { name: 'Thread by Ada Lovelace' })
    await thread.waitFor()
    assert.equal(await thread.locator('.mention').textContent(), '@Grace Hopper')
    assert.equal(await thread.locator('strong', { hasText: '429' }).count(), 1, 'markdown rendered')
    assert.equal(await page.locator('.comment-body script').count(), 0, 'no HTML from a comment reaches the page')
    await thread.getByRole('button', { name: 'Reply' }).click()
    await thread.getByLabel('Reply').fill('Rate limit upstream.')
    await thread.getByRole('button', { name: 'Reply' }).last().click()
    await thread.getByText('Rate limit upstream.').waitFor()
    await thread.getByRole('button', { name: 'Resolve' }).click()
    await thread.getByText(/Resolved by Ada Lovelace/).waitFor()
    await screenshot(page, 'comments')
    await page.goto(`/traces?project_id=${fx.stack.projectId}`)
    await page.locator('table.grid tbody tr').first().waitFor()
    assert.equal(await page.getByTitle('2 comments on this trace').count(), 1, 'the trace list counts the comments')
    assert.equal(await page.getByRole('columnheader', { name: 'Comments' }).count(), 1, 'the icon names its column')
    assertNoProblems(opened)
    await opened.context.close()
  })

  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    it(`fits a queue item and a comment thread at ${viewport.width}×${viewport.height}`, async () => {
      // Ada holds the queue's last item (taken after her last Enter above).
      const opened = await signedInPerson(fx.browser, fx.stack, 'ada@acme.example', password)
      const { page } = opened
      await page.setViewportSize(viewport)
      const overflow = () =>
        page.evaluate(() => {
          const content = document.querySelector<HTMLElement>('.content')
          return Math.max(document.documentElement.scrollWidth - window.innerWidth, content ? content.scrollWidth - content.clientWidth : 0)
        })
      await page.goto(`/annotation-queues/${fx.seeded.queueId}?project_id=${fx.stack.projectId}`)
      await page.getByRole('group', { name: 'Scores to give' }).waitFor()
      await page.locator('.waterfall-row').first().waitFor({ state: 'attached' })
      await screenshot(page, `review-item-${viewport.width}`)
      assert.equal(await overflow(), 0, 'the queue item does not scroll sideways')
      await page.goto(`/traces/${fx.seeded.scenario.billingTraceId}?project_id=${fx.stack.projectId}`)
      await page.getByRole('region', { name: 'Comments' }).waitFor()
      await page.locator('.thread').first().waitFor()
      await screenshot(page, `comments-${viewport.width}`)
      assert.equal(await overflow(), 0, 'the comment thread does not scroll sideways')
      assertNoProblems(opened)
      await opened.context.close()
    })
  }
})
