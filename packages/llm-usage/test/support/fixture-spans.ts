import { readFileSync } from 'node:fs'
import type { Attributes } from '../../src/index.ts'

interface ListAttribute {
  key: string
  value: Record<string, unknown>
}
interface FixtureSpan {
  name: string
  startTimeUnixNano: string
  attributes: ListAttribute[]
}
interface FixtureRequest {
  resourceSpans: Array<{ scopeSpans: Array<{ spans: FixtureSpan[] }> }>
}

export interface NamedAttributes {
  name: string
  start: Date
  attributes: Attributes
}

/** The spans of a request in test-fixtures/llm-conventions, attributes in the map form. */
export function fixtureSpans(file: string): NamedAttributes[] {
  const request = JSON.parse(readFileSync(new URL(`../../../../test-fixtures/llm-conventions/${file}`, import.meta.url), 'utf8')) as FixtureRequest
  return request.resourceSpans.flatMap((resource) =>
    resource.scopeSpans.flatMap((scope) =>
      scope.spans.map((span) => ({
        name: span.name,
        start: new Date(Number(BigInt(span.startTimeUnixNano) / 1_000_000n)),
        attributes: Object.fromEntries(span.attributes.map(({ key, value }) => [key, value])),
      })),
    ),
  )
}
