import AjvModule, { type ErrorObject } from 'ajv'
import { BadRequestError } from '@tracewell/http'
import { type DatasetItemBody, DatasetItemBodySchema, maxItemsPerRequest } from '@tracewell/api-schemas'

// The three forms POST /api/datasets/:id/items takes (one item, {items: [...]}, JSONL lines) as
// one list, with a 400 that names the item and the field when one is wrong: the union the route
// declares would otherwise be refused as a whole ("must match a schema in anyOf").

const Ajv = AjvModule.default
const checkItem = new Ajv({ allErrors: false, strict: false, coerceTypes: false }).compile(DatasetItemBodySchema)

const describe = (error: ErrorObject | undefined) => {
  if (error === undefined) return 'is not a dataset item'
  if (error.keyword === 'additionalProperties') return `${error.instancePath}: must NOT have the property ${JSON.stringify((error.params as { additionalProperty: string }).additionalProperty)}`
  return `${error.instancePath}: ${error.message ?? 'is not valid'}`
}

function checked(item: unknown, where: string): DatasetItemBody {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new BadRequestError(`${where}: must be an object {input, expectedOutput?, metadata?}`)
  if (!checkItem(item)) throw new BadRequestError(`${where}${describe(checkItem.errors?.[0])}`)
  const body = item as DatasetItemBody
  if ('input' in body && body.input === null) throw new BadRequestError(`${where}/input: must not be null`)
  if (body.input === undefined && body.sourceTraceId === undefined) throw new BadRequestError(`${where}: needs an input, or a sourceTraceId to take it from`)
  if (body.sourceSpanId !== undefined && body.sourceTraceId === undefined) throw new BadRequestError(`${where}/sourceSpanId: needs the sourceTraceId of its trace`)
  return body
}

/** An item as sent, and where it was in the request, for the errors found later (its source missing). */
export interface ItemAt {
  body: DatasetItemBody
  where: string
}

const at = (item: unknown, where: string): ItemAt => ({ body: checked(item, where), where })

/** The request's items, each checked; `jsonl` when the body came as JSONL (errors then name the line). */
export function itemsOfBody(body: unknown, jsonl: boolean): ItemAt[] {
  if (jsonl) {
    const values = body as unknown[]
    const lines = lineNumbers.get(values)
    return values.map((item, index) => at(item, `body line ${lines?.[index] ?? index + 1}`))
  }
  if (Array.isArray(body)) return checkCount(body).map((item, index) => at(item, `body/${index}`))
  if (typeof body === 'object' && body !== null && 'items' in body && !('input' in body) && !('sourceTraceId' in body)) {
    const { items, ...rest } = body as { items: unknown }
    const extra = Object.keys(rest)[0]
    if (extra !== undefined) throw new BadRequestError(`body: must NOT have the property ${JSON.stringify(extra)} beside items`)
    if (!Array.isArray(items)) throw new BadRequestError('body/items: must be an array of items')
    return checkCount(items).map((item, index) => at(item, `body/items/${index}`))
  }
  return [at(body, 'body')]
}

function checkCount(items: unknown[]): unknown[] {
  if (items.length === 0) throw new BadRequestError('body/items: must hold at least one item')
  if (items.length > maxItemsPerRequest) throw new BadRequestError(`body/items: at most ${maxItemsPerRequest} items a request, got ${items.length}`)
  return items
}

/** Each parsed JSONL body's line numbers (blank lines are skipped), for the errors that name a line. */
const lineNumbers = new WeakMap<unknown[], number[]>()

/** JSONL text as its lines' values; blank lines are skipped, a line that is not JSON is a 400 naming it. */
export function parseJsonl(text: string): unknown[] {
  const values: unknown[] = []
  const numbers: number[] = []
  const lines = text.split(/\r?\n/)
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue
    try {
      values.push(JSON.parse(line))
      numbers.push(index + 1)
    } catch (error) {
      throw new BadRequestError(`body line ${index + 1}: not JSON (${(error as Error).message})`)
    }
  }
  if (values.length === 0) throw new BadRequestError('body: the JSONL upload holds no item')
  if (values.length > maxItemsPerRequest) throw new BadRequestError(`body: at most ${maxItemsPerRequest} items a request, got ${values.length}`)
  lineNumbers.set(values, numbers)
  return values
}
