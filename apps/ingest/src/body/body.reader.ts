import type { Readable } from 'node:stream'
import { createGunzip, createInflate, createInflateRaw, type Gunzip, type Inflate, type InflateRaw } from 'node:zlib'
import { bodyTooLarge, corruptCompressedBody, inflatedBodyTooLarge } from '../errors.ts'
import type { BodyEncoding } from './media-type.ts'

export interface BodyLimits {
  /** Largest body as sent (MAX_BODY_BYTES). */
  maxBodyBytes: number
  /** Largest body after inflation (MAX_INFLATED_BYTES). */
  maxInflatedBytes: number
}

/** Looks at each chunk of the (inflated) body as it arrives; an error refuses the body there. */
export interface BodyScreen {
  write(chunk: Buffer): Error | undefined
  /** After the last chunk. */
  end(): Error | undefined
}

/**
 * Reads a request body into one Buffer, inflating gzip/deflate as the bytes arrive. Both limits
 * are enforced on running counts, so an oversized upload or a gzip bomb is stopped at the first
 * chunk past the limit (a gzip bomb is stopped while inflating), never buffered whole;
 * so is a body the `screen` refuses.
 */
export function readBody(source: Readable, encoding: BodyEncoding, limits: BodyLimits, screen?: BodyScreen): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let rawBytes = 0
    let bodyBytes = 0
    let inflater: Gunzip | Inflate | InflateRaw | undefined
    let settled = false
    let rawEnded = false

    const stop = (error: Error | undefined, body?: Buffer) => {
      if (settled) return
      settled = true
      source.removeListener('data', onRawData)
      source.removeListener('end', onRawEnd)
      source.removeListener('error', onRawError)
      source.removeListener('close', onRawClose)
      if (inflater) {
        inflater.removeAllListeners()
        // A late zlib error after we are done must not become an unhandled 'error' event.
        inflater.on('error', () => {})
        if (error) inflater.destroy()
      }
      if (error) reject(error)
      else resolve(body ?? Buffer.alloc(0))
    }

    const onBodyData = (chunk: Buffer) => {
      bodyBytes += chunk.length
      const limit = inflater ? limits.maxInflatedBytes : limits.maxBodyBytes
      if (bodyBytes > limit) {
        stop(inflater ? inflatedBodyTooLarge(limit) : bodyTooLarge(limit))
        return
      }
      const refused = screen?.write(chunk)
      if (refused) {
        stop(refused)
        return
      }
      chunks.push(chunk)
    }
    // Always a copy: a chunk may be a view over a buffer the socket reuses.
    const finish = () => {
      const refused = screen?.end()
      if (refused) stop(refused)
      else stop(undefined, Buffer.concat(chunks, bodyBytes))
    }

    function onRawData(chunk: Buffer | string) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
      rawBytes += bytes.length
      if (rawBytes > limits.maxBodyBytes) {
        stop(bodyTooLarge(limits.maxBodyBytes))
        return
      }
      if (encoding === 'identity') {
        onBodyData(bytes)
        return
      }
      inflater ??= startInflater(encoding, bytes)
      inflater.write(bytes)
    }
    function onRawEnd() {
      rawEnded = true
      if (inflater) inflater.end()
      else if (encoding === 'identity') finish()
      else stop(corruptCompressedBody(encoding, 'empty body'))
    }
    function onRawError(error: Error) {
      stop(Object.assign(error, { statusCode: 400 }))
    }
    function onRawClose() {
      // The client went away before the body ended; nobody is left to answer.
      if (!rawEnded) stop(Object.assign(new Error('request body aborted'), { statusCode: 400 }))
    }

    function startInflater(kind: 'gzip' | 'deflate', first: Buffer): Gunzip | Inflate | InflateRaw {
      // Some clients send raw DEFLATE for "deflate" instead of the zlib wrapping HTTP specifies;
      // the two-byte zlib header tells them apart.
      const stream = kind === 'gzip' ? createGunzip(INFLATE_OPTIONS) : looksLikeZlib(first) ? createInflate(INFLATE_OPTIONS) : createInflateRaw(INFLATE_OPTIONS)
      stream.on('data', onBodyData)
      stream.on('end', finish)
      stream.on('error', (error: Error) => stop(corruptCompressedBody(kind, error.message)))
      return stream
    }

    source.on('data', onRawData)
    source.on('end', onRawEnd)
    source.on('error', onRawError)
    source.on('close', onRawClose)
    source.resume()
  })
}

// zlib's default 16 KiB output chunks make a 48 MB body 3,000 round trips to the thread pool,
// each with its callback and buffer; 64 KiB chunks cut that fourfold (bench:hostile), while a
// small body still costs one buffer of that size, not a larger one.
const INFLATE_OPTIONS = { chunkSize: 64 * 1024 }

function looksLikeZlib(bytes: Buffer): boolean {
  if (bytes.length < 2) return true
  const cmf = bytes[0] as number
  const flg = bytes[1] as number
  return (cmf & 0x0f) === 8 && (cmf * 256 + flg) % 31 === 0
}
