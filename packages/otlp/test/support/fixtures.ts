import { readFileSync } from 'node:fs'

/** The recorded client bodies shared by every package (see test-fixtures/README.md). */
export const FIXTURES_DIR = new URL('../../../../test-fixtures/', import.meta.url)

export function fixtureText(name: string): string {
  return readFileSync(new URL(name, FIXTURES_DIR), 'utf8')
}

export function fixtureJson(name: string): unknown {
  return JSON.parse(fixtureText(name))
}

export function fixtureBytes(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(name, FIXTURES_DIR)))
}

export interface RequestsIndex {
  traces: Record<'otlpJson' | 'otlpProto' | 'langtraceTs', { traceId: string; spanIds: string[] }>
}

export const requests = fixtureJson('requests.json') as RequestsIndex

export const JSON_FIXTURES = [
  'otel-js-otlp-json-1.json',
  'otel-js-otlp-json-2.json',
  'langtrace-ts-sdk-1.json',
  'langtrace-ts-sdk-2.json',
  'langtrace-python-legacy.json',
] as const

export const PROTOBUF_FIXTURES = ['otel-js-otlp-proto-1.bin', 'otel-js-otlp-proto-2.bin'] as const
