import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type pg from 'pg'
import { poolOf } from '@tracewell/db'
import { createTestDatabase, type TestDatabase } from '@tracewell/db/testing'
import { CopyChunks, NotEncodable } from '../src/copy-chunks.ts'
import { copyData } from '../src/summary-copy.ts'

// The binary fields the summaries' COPY writes, read back by Postgres itself and compared with what
// Postgres makes of the same values as text (the form the fold's statement sends them in).

const COLUMNS = 'id int4, cost numeric, day date, at timestamptz, names text[], filter varbit'
const COPY = 'copy encoded (id, cost, day, at, names, filter) from stdin with (format binary)'

interface Row {
  cost: string | null
  day: string
  iso: string
  names: string[]
  filter: Buffer | null
}

const rows: Row[] = [
  { cost: '0', day: '2000-01-01', iso: '2000-01-01T00:00:00.000000Z', names: [], filter: null },
  { cost: '-0', day: '1999-12-31', iso: '1969-12-31T23:59:59.999999Z', names: ['gpt-4o'], filter: Buffer.from([0x80]) },
  { cost: '12.50', day: '2026-12-07', iso: '2026-12-07T19:05:01.123456Z', names: ['svc "a,b" {c}\\d', 'tab\there', ''], filter: Buffer.from('00ff10a5', 'hex') },
  { cost: '0.0000001', day: '2255-06-01', iso: '2255-06-01T00:00:00.000001Z', names: ['ärger', '🙂', 'nul\u0000inside'], filter: Buffer.alloc(32, 0x5a) },
  { cost: '0.9334564358333333', day: '1970-01-01', iso: '2026-01-01T00:00:00.000000Z', names: ['NULL'], filter: Buffer.alloc(8192, 0xc3) },
  { cost: '-123456789012.000100', day: '2024-02-29', iso: '2024-02-29T12:00:00.500000Z', names: ['a', 'b', 'c', 'd', 'e'], filter: Buffer.from([0]) },
  { cost: null, day: '0001-01-01', iso: '1800-01-01T00:00:00.000000Z', names: ['x'.repeat(10_000)], filter: null },
  { cost: '10000', day: '9999-12-31', iso: '2255-06-05T00:00:00.000000Z', names: [], filter: null },
]

function encode(copy: CopyChunks, id: number, row: Row): void {
  copy.row()
  copy.int32(id)
  copy.numericText(row.cost)
  copy.date(row.day)
  copy.timestampMicros(Date.parse(`${row.iso.slice(0, 19)}Z`) * 1000 + Number(row.iso.slice(20, 26)))
  copy.textArray(row.names)
  copy.varbit(row.filter)
}

function dataOf(copy: CopyChunks): Buffer {
  copy.finish()
  return Buffer.concat(copy.chunks)
}

describe('binary COPY fields, read back by Postgres', () => {
  let database: TestDatabase
  let client: pg.PoolClient
  before(async () => {
    database = await createTestDatabase({ migrated: false })
    client = await (poolOf.get(database.db) as pg.Pool).connect()
    await client.query(`set time zone 'UTC'`)
  })
  after(async () => {
    client.release()
    await database.drop()
  })

  it('stores numeric, date, timestamptz, text[] and varbit exactly as Postgres reads their text', async () => {
    await client.query(`drop table if exists encoded; create temporary table encoded (${COLUMNS})`)
    const copy = new CopyChunks(6)
    for (const [id, row] of rows.entries()) encode(copy, id, row)
    assert.equal(await copyData(client, COPY, dataOf(copy)), rows.length)

    for (const [id, row] of rows.entries()) {
      const stored = await client.query('select cost::text as cost, day::text as day, at, names, filter::text as filter from encoded where id = $1', [id])
      const expected = await client.query(
        `select $1::numeric::text as cost, $2::date::text as day, $3::timestamptz as at, $4::text[] as names,
          case when $5::text is null then null else ('x' || $5)::varbit::text end as filter`,
        [row.cost, row.day, row.iso, row.names.map((name) => name.replaceAll('\u0000', '\ufffd')), row.filter?.toString('hex') ?? null],
      )
      assert.deepEqual(stored.rows[0], expected.rows[0], `row ${id}`)
    }
  })

  it('takes back a row that turns out not to be encodable, even across a new chunk, and keeps the rows around it', async () => {
    await client.query(`drop table if exists encoded; create temporary table encoded (${COLUMNS})`)
    const copy = new CopyChunks(6)
    encode(copy, 1, rows[2] as Row)
    const mark = copy.mark()
    // A text[] of 300 KB closes the first chunk and starts another before the cost fails.
    assert.throws(() => {
      copy.row()
      copy.int32(2)
      copy.textArray(['y'.repeat(300_000)])
      copy.numericText('1e5')
    }, NotEncodable)
    assert.ok(copy.chunks.length > 0, 'the failed row closed a chunk')
    copy.rewind(mark)
    assert.equal(copy.chunks.length, 0)
    assert.throws(() => {
      copy.row()
      copy.int32(2 ** 31)
    }, NotEncodable)
    copy.rewind(mark)
    encode(copy, 3, rows[4] as Row)
    assert.equal(await copyData(client, COPY, dataOf(copy)), 2)
    const { rows: stored } = await client.query<{ id: number; cost: string }>('select id, cost::text as cost from encoded order by id')
    assert.deepEqual(stored, [{ id: 1, cost: '12.50' }, { id: 3, cost: '0.9334564358333333' }])
  })

  it('refuses what it cannot write exactly: a cost with an exponent or a sign of plus, a day not in ISO form', () => {
    const copy = new CopyChunks(1)
    for (const cost of ['1e5', '+1', '1.', '.5', 'NaN', '']) assert.throws(() => copy.numericText(cost), NotEncodable, cost)
    for (const day of ['2026-13-01', '2026-1-01', 'today']) assert.throws(() => copy.date(day), NotEncodable, day)
    // Microseconds past 2^53 (June 2255) are left to the statement, as epochMicros leaves them.
    assert.throws(() => copy.timestampMicros(2 ** 53), NotEncodable)
  })
})
