import type { ResolvedAddress } from './checked-host.ts'

// The base URL of an LLM connection (or a webhook, later): where Tracewell sends its calls, each
// to a path of its own under it (<baseUrl>/chat/completions). A query or fragment would let whoever
// saves the URL choose the path after all (`http://host/admin?` + `/chat/completions`), and
// credentials in a URL end up in logs, so none of them is taken.

/** A base URL refused; the message names the rule, for a `body/baseUrl: …` 400. */
export class BaseUrlError extends Error {
  override readonly name = 'BaseUrlError'
}

export async function checkBaseUrl(raw: string, checkHost: (host: string) => Promise<readonly ResolvedAddress[]>): Promise<string> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new BaseUrlError(`not a URL: ${JSON.stringify(raw)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BaseUrlError(`must be http:// or https://, got ${url.protocol}`)
  if (url.username !== '' || url.password !== '') throw new BaseUrlError('must not hold credentials; send the key as apiKey')
  // An empty `?` or `#` leaves no search or hash on the parsed URL: the raw text is what is judged.
  if (raw.includes('?')) throw new BaseUrlError('must not have a query (?…): Tracewell appends the path of each call itself')
  if (raw.includes('#')) throw new BaseUrlError('must not have a fragment (#…): Tracewell appends the path of each call itself')
  if (url.hostname === '') throw new BaseUrlError('needs a host')
  // The host as undici connects to it: an IPv6 literal without its brackets.
  await checkHost(url.hostname.replace(/^\[(.*)\]$/, '$1')).catch((error: unknown) => {
    throw new BaseUrlError((error as Error).message)
  })
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}
