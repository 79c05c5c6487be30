import assert from 'node:assert/strict'
import { listedTraces, type AllInOne, type TraceRow } from './all-in-one.ts'
import { eventually } from './processes.ts'

// What a user finds of a stored LLM call through the trace list, not only what is stored: the
// trace by a word of its prompt or its answer, by the model asked for or the one that answered
// and by the vendor, in any case; inside a cost bound and a time window around it, and not
// outside them.

export interface SearchedCall {
  /** Words of the prompt and of the answer, each of which finds the trace with `q`. */
  words: string[]
  model: string
  /** The model that answered, when the instrumentation recorded it. */
  responseModel: string | null
  vendor: string
}

const ids = (rows: TraceRow[]) => rows.map((row) => row.traceId)

/** The trace's row once the summariser has listed it (found by its first word). */
async function listedRow(stack: AllInOne, traceId: string, word: string): Promise<TraceRow> {
  return eventually(async () => (await listedTraces(stack, { q: word, limit: '500' })).find((row) => row.traceId === traceId), 20_000, `trace ${traceId} listed for q=${word}`)
}

/** Asserts how the trace is found and left out; answers its row in the list. */
export async function assertFoundBySearchAndFilter(stack: AllInOne, traceId: string, call: SearchedCall, label: string): Promise<TraceRow> {
  const [firstWord = ''] = call.words
  const row = await listedRow(stack, traceId, firstWord)
  const finds = async (filters: Record<string, string>, expected: boolean) => {
    const found = ids(await listedTraces(stack, { ...filters, limit: '500' })).includes(traceId)
    assert.equal(found, expected, `${label}: ${new URLSearchParams(filters)} ${expected ? 'finds' : 'leaves out'} the trace`)
  }
  for (const word of call.words) await finds({ q: word }, true)
  await finds({ q: 'pangolin' }, false)
  for (const model of [call.model, call.model.toUpperCase(), call.responseModel]) if (model !== null) await finds({ model }, true)
  await finds({ model: 'gpt-3.5-turbo' }, false)
  for (const vendor of [call.vendor, call.vendor.toUpperCase(), `${call.vendor[0]?.toUpperCase()}${call.vendor.slice(1)}`]) await finds({ vendor }, true)
  await finds({ vendor: 'anthropic' }, false)

  // An unknown cost or token count (a call whose instrumentation recorded none) matches no bound.
  const cost = row.costUsd
  if (cost === null) await finds({ max_cost: '1000' }, false)
  else {
    await finds({ max_cost: String(cost) }, true)
    await finds({ min_cost: String(cost), max_cost: String(cost) }, true)
    await finds({ max_cost: String(cost / 2) }, false)
    await finds({ min_cost: String(cost * 2) }, false)
  }
  if (row.totalTokens === null) await finds({ min_tokens: '0' }, false)
  else {
    await finds({ max_tokens: String(row.totalTokens) }, true)
    await finds({ max_tokens: String(row.totalTokens - 1) }, false)
  }

  // The window is [from, to), to the millisecond: the trace's own millisecond finds it.
  const start = Date.parse(row.startTime)
  const iso = (ms: number) => new Date(ms).toISOString()
  await finds({ from: iso(start), to: iso(start + 1) }, true)
  await finds({ from: iso(start + 1) }, false)
  await finds({ to: iso(start) }, false)
  await finds({ q: firstWord, model: call.model, vendor: call.vendor, from: iso(start - 60_000), to: iso(start + 60_000), ...(cost === null ? {} : { max_cost: String(cost) }) }, true)

  const unknown = await fetch(`${stack.service.url}/api/traces?max_price=1`, { headers: { 'x-api-key': stack.projectKey } })
  assert.equal(unknown.status, 400, `${label}: an unknown parameter is refused`)
  assert.match(((await unknown.json()) as { message: string }).message, /unknown query parameter "max_price"/)
  return row
}
