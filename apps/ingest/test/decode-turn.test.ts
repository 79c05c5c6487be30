import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { DecodeTurn } from '../src/body/decode-turn.ts'
import { langtraceSpans } from './support/fixtures.ts'
import { startIngest, type IngestHarness } from './support/ingest-harness.ts'

describe('DecodeTurn', () => {
  it('runs the decodes asked for in one turn together, after the turn, in the order asked', async () => {
    const turn = new DecodeTurn()
    const ran: string[] = []
    const first = turn.run(() => ran.push('first') && 'one')
    // A callback queued between two decodes of the same turn runs after both: they run as one.
    setImmediate(() => ran.push('between'))
    const second = turn.run(() => ran.push('second') && 'two')
    assert.deepEqual(ran, [], 'nothing is decoded while the turn is still reading')
    assert.deepEqual(await Promise.all([first, second]), ['one', 'two'])
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(ran, ['first', 'second', 'between'])
  })

  it('rejects only the promise of a decode that throws', async () => {
    const turn = new DecodeTurn()
    const refused = new Error('body: expected an OTLP JSON object or a Langtrace array of spans')
    const results = await Promise.allSettled([
      turn.run(() => 1),
      turn.run(() => {
        throw refused
      }),
      turn.run(() => 3),
    ])
    assert.deepEqual(results, [
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: refused },
      { status: 'fulfilled', value: 3 },
    ])
  })

  it('runs a decode asked for during a run in the next turn', async () => {
    const turn = new DecodeTurn()
    const ran: string[] = []
    let later: Promise<void> | undefined
    await turn.run(() => {
      ran.push('outer')
      setImmediate(() => ran.push('next turn'))
      later = turn.run(() => void ran.push('inner'))
    })
    assert.deepEqual(ran, ['outer'])
    await later
    assert.deepEqual(ran, ['outer', 'next turn', 'inner'])
  })
})

describe('requests decoded in one turn', () => {
  let ingest: IngestHarness
  before(async () => {
    ingest = await startIngest()
  })
  after(async () => {
    await ingest.close()
  })

  it('answer each for its own body: the malformed one 400, the others 200, their spans queued', async () => {
    const post = (payload: string | Buffer) =>
      ingest.app.inject({ method: 'POST', url: '/api/trace', headers: { 'x-api-key': ingest.tenant.projectKey, 'content-type': 'application/json' }, payload })
    const answers = await Promise.all([post(langtraceSpans(2)), post('{"resourceSpans": [}'), post(langtraceSpans(3)), post('[]')])
    const accepted = { status: 200, message: 'Traces received successfully' }
    assert.deepEqual(
      answers.map((answer) => [answer.statusCode, answer.json()]),
      [
        [200, accepted],
        [400, { status: 400, message: 'body: malformed JSON (Unexpected token \'}\', "{"resourceSpans": [}" is not valid JSON at position 19)' }],
        [200, accepted],
        // An empty batch is a success that stores nothing.
        [200, accepted],
      ],
    )
    assert.equal((await ingest.queuedSpans()).length, 5)
  })
})
