import { requireUtf8Json } from '@tracewell/http'
import { unsupportedContentEncoding, unsupportedContentType } from '../errors.ts'

/** How a trace body is encoded on the wire: told by Content-Type, never by User-Agent. */
export type BodyFormat = 'json' | 'protobuf'
export type BodyEncoding = 'identity' | 'gzip' | 'deflate'

const formatsByMediaType: Record<string, BodyFormat> = {
  'application/json': 'json',
  'application/x-protobuf': 'protobuf',
  'application/protobuf': 'protobuf',
}

/** The media types a trace body may name, each as Fastify matches a Content-Type's. */
export const traceMediaTypes: readonly string[] = Object.keys(formatsByMediaType)

const encodingsByName: Record<string, BodyEncoding> = {
  '': 'identity',
  identity: 'identity',
  gzip: 'gzip',
  'x-gzip': 'gzip',
  deflate: 'deflate',
}

/** The format of a Content-Type such as `application/json; charset=utf-8`, or undefined. */
export function formatOf(contentType: string | undefined): BodyFormat | undefined {
  if (contentType === undefined) return undefined
  const semicolon = contentType.indexOf(';')
  const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase()
  return formatsByMediaType[mediaType]
}

/** The body's format; anything but JSON or protobuf is a 415, and so is JSON in a charset other than UTF-8. */
export function requireFormat(contentType: string | undefined): BodyFormat {
  const format = formatOf(contentType)
  if (format === undefined) throw unsupportedContentType(contentType)
  if (format === 'json') requireUtf8Json(contentType as string)
  return format
}

/** The body's Content-Encoding; anything we cannot inflate is a 415. */
export function requireEncoding(contentEncoding: string | undefined): BodyEncoding {
  const name = (contentEncoding ?? '').trim().toLowerCase()
  const encoding = encodingsByName[name]
  if (encoding === undefined) throw unsupportedContentEncoding(contentEncoding ?? '')
  return encoding
}
