/** Header values as Node gives them (HTTP) or as gRPC metadata is read into a plain object. */
export type CredentialHeaders = Readonly<Record<string, string | readonly string[] | undefined>>

const bearerPrefix = /^bearer[ \t]+/i

/**
 * The API key a request presents: `x-api-key`, or else `Authorization: Bearer <key>` (what most
 * OpenTelemetry exporters can be told to send). `x-api-key` wins when both are sent, so a client
 * that sets it keeps its meaning whatever else a proxy adds. Empty values present nothing.
 */
export function presentedApiKey(headers: CredentialHeaders): string | undefined {
  const apiKey = firstValue(headers['x-api-key'])
  if (apiKey !== undefined && apiKey !== '') return apiKey
  const authorization = firstValue(headers.authorization)
  if (authorization === undefined || !bearerPrefix.test(authorization)) return undefined
  const token = authorization.replace(bearerPrefix, '').trim()
  return token === '' ? undefined : token
}

function firstValue(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0]
}
