/** Header values as Node gives them (HTTP) or as gRPC metadata is read into a plain object. */
export type CredentialHeaders = Readonly<Record<string, string | readonly string[] | undefined>>

const bearerPrefix = /^bearer[ \t]+/i
const basicPrefix = /^basic[ \t]+/i

/**
 * The API key a request presents: `x-api-key`, or else `Authorization: Bearer <key>` (what most
 * OpenTelemetry exporters can be told to send), or else `Authorization: Basic` with the key as the
 * password, whatever the user name (what Langfuse's OpenTelemetry exporter sends: its public key
 * as the user, its secret key as the password). `x-api-key` wins when both are sent, so a client
 * that sets it keeps its meaning whatever else a proxy adds. Empty values present nothing.
 */
export function presentedApiKey(headers: CredentialHeaders): string | undefined {
  const apiKey = firstValue(headers['x-api-key'])
  if (apiKey !== undefined && apiKey !== '') return apiKey
  const authorization = firstValue(headers.authorization)
  if (authorization === undefined) return undefined
  if (bearerPrefix.test(authorization)) return nonEmpty(authorization.replace(bearerPrefix, '').trim())
  if (basicPrefix.test(authorization)) {
    const credentials = Buffer.from(authorization.replace(basicPrefix, '').trim(), 'base64').toString('utf8')
    const colon = credentials.indexOf(':')
    return colon === -1 ? undefined : nonEmpty(credentials.slice(colon + 1))
  }
  return undefined
}

const nonEmpty = (value: string): string | undefined => (value === '' ? undefined : value)

function firstValue(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0]
}
