import { createHmac, timingSafeEqual } from 'node:crypto'

// Webhook bodies are signed as Stripe signs its own (https://docs.stripe.com/webhooks#verify-manually):
// `x-tracewell-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. The time is
// inside the signed text, so a receiver that refuses old signatures refuses a replayed body too.

export const signatureHeaderName = 'x-tracewell-signature'

/** How old a signature receivers should accept, at most: five minutes, as Stripe's libraries do. */
export const defaultToleranceSeconds = 300

const hmacHex = (secret: string, timestamp: number, body: string) => createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')

/** The header's value for `body` (the exact bytes sent), signed at `timestamp` (unix seconds). */
export function signWebhookBody(body: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, body)}`
}

export type SignatureVerdict = { ok: true; timestamp: number } | { ok: false; reason: string }

export interface VerifyOptions {
  /** Older signatures are refused (default 300 s). */
  toleranceSeconds?: number
  /** Now, in unix seconds (a test's clock). */
  nowSeconds?: number
}

/**
 * Whether `header` signs `body` (the raw request body, not a re-serialisation) with `secret`, no
 * more than the tolerance ago. Any one v1 entry may match: during a secret's rotation a sender
 * may sign with both.
 */
export function verifyWebhookSignature(header: string | undefined, body: string, secret: string, options: VerifyOptions = {}): SignatureVerdict {
  if (header === undefined || header === '') return { ok: false, reason: `no ${signatureHeaderName} header` }
  const parts = header.split(',').map((part) => part.trim().split('='))
  const timestamps = parts.filter(([key]) => key === 't').map(([, value]) => value ?? '')
  const signatures = parts.filter(([key]) => key === 'v1').map(([, value]) => value ?? '')
  if (timestamps.length !== 1 || !/^\d{1,12}$/.test(timestamps[0] as string)) return { ok: false, reason: 'the header has no single t=<unix seconds>' }
  if (signatures.length === 0) return { ok: false, reason: 'the header has no v1 signature' }
  const timestamp = Number(timestamps[0])
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000)
  const tolerance = options.toleranceSeconds ?? defaultToleranceSeconds
  const expected = Buffer.from(hmacHex(secret, timestamp, body), 'hex')
  const matches = signatures.some((signature) => {
    const given = Buffer.from(signature, 'hex')
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
  if (!matches) return { ok: false, reason: 'no v1 signature matches the body with this secret' }
  if (Math.abs(now - timestamp) > tolerance) return { ok: false, reason: `the signature is ${now - timestamp} s old, more than ${tolerance} s` }
  return { ok: true, timestamp }
}
