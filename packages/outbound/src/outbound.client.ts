import { isIP, type LookupFunction } from 'node:net'
import type * as Undici from 'undici'
import { createAddressPolicy, parseAllowCidrs, type AddressPolicy } from './address-policy.ts'
import { checkBaseUrl } from './base-url.ts'
import { boundedBody } from './bounded-body.ts'
import { checkedAddresses, systemLookup, type HostLookup, type ResolvedAddress } from './checked-host.ts'
import { OutboundError, outboundErrorIn, OutboundTimeoutError, ResponseTooLargeError } from './errors.ts'

// Every outbound HTTP request Tracewell makes goes through here (docs/operations.md#outbound-policy).
// undici (the HTTP client Node's own fetch is built on, from npm so its Agent and fetch are one
// version) lets a dispatcher bring its own connector. Ours checks an IP literal itself, and gives
// the socket a `lookup` that resolves the name once, checks every address and answers only those:
// the socket connects to what was checked (trying each, as Node's happy eyeballs does), and
// nothing looks the name up a second time; TLS still verifies the certificate against the name.
// The package is imported by the first call, not at start: most processes at rest never call out.

export interface OutboundOptions {
  /** OUTBOUND_ALLOW_CIDRS: ranges the policy would refuse that calls may reach anyway (comma-separated CIDRs). */
  allowCidrs: string
  /** OUTBOUND_MAX_RESPONSE_BYTES: a reply's body is read up to this, then cut. */
  maxResponseBytes: number
  /** OUTBOUND_CONNECT_TIMEOUT_MS: resolving the host and connecting, at most. */
  connectTimeoutMs: number
  /** How host names are resolved; the system's resolver unless a test brings its own. */
  lookup?: HostLookup
}

/** fetch as clients take it (the `openai` package's `fetch` option), through the policy. */
export type OutboundFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export interface Outbound {
  /** A fetch whose every request, from connect to its reply's last byte, takes at most `timeoutMs`. */
  fetchWithin(timeoutMs: number): OutboundFetch
  /** A base URL as saved: `scheme://host[:port][/path]`, its host resolved and checked now; throws a BaseUrlError naming the rule. */
  checkBaseUrl(raw: string): Promise<string>
  readonly maxResponseBytes: number
  /** Closes the pooled connections. */
  close(): Promise<void>
}

/** The settings of a service that calls out, as createOutbound takes them. */
export interface OutboundSettings {
  OUTBOUND_ALLOW_CIDRS?: string | undefined
  OUTBOUND_MAX_RESPONSE_BYTES: number
  OUTBOUND_CONNECT_TIMEOUT_MS: number
}

export const outboundOptionsOf = (settings: OutboundSettings): OutboundOptions => ({
  allowCidrs: settings.OUTBOUND_ALLOW_CIDRS ?? '',
  maxResponseBytes: settings.OUTBOUND_MAX_RESPONSE_BYTES,
  connectTimeoutMs: settings.OUTBOUND_CONNECT_TIMEOUT_MS,
})

interface Client {
  undici: typeof Undici
  agent: Undici.Agent
}

export function createOutbound(options: OutboundOptions): Outbound {
  const policy = createAddressPolicy(parseAllowCidrs(options.allowCidrs))
  const resolve = options.lookup ?? systemLookup
  let client: Promise<Client> | undefined
  const clientOf = () =>
    (client ??= import('undici').then(
      (undici) => ({ undici, agent: new undici.Agent({ connect: guardedConnector(undici, policy, resolve, options.connectTimeoutMs) }) }),
      (error: unknown) => {
        client = undefined
        throw error
      },
    ))

  async function outboundFetch(input: string | URL | Request, init: RequestInit | undefined, timeoutMs: number): Promise<Response> {
    if (typeof input !== 'string' && !(input instanceof URL)) throw new TypeError('outbound fetch takes a URL, not a Request')
    const { undici, agent } = await clientOf()
    const timer = new AbortController()
    const timeout = new OutboundTimeoutError(timeoutMs)
    const timing = setTimeout(() => timer.abort(timeout), timeoutMs)
    const done = () => clearTimeout(timing)
    const signal = init?.signal ? AbortSignal.any([init.signal, timer.signal]) : timer.signal
    let response: Undici.Response
    try {
      response = await undici.fetch(input, {
        ...(init as Undici.RequestInit),
        signal,
        dispatcher: agent,
        // No redirect is followed: a base URL names where calls go, and a 3xx answer is its status.
        redirect: 'manual',
      })
    } catch (error) {
      done()
      throw outboundErrorIn(error) ?? (timer.signal.aborted ? timeout : error)
    }
    const length = Number(response.headers.get('content-length'))
    if (length > options.maxResponseBytes) {
      done()
      await response.body?.cancel().catch(() => undefined)
      throw new ResponseTooLargeError(options.maxResponseBytes)
    }
    if (response.body === null) {
      done()
      return response as unknown as Response
    }
    const body = boundedBody(response.body as ReadableStream<Uint8Array>, {
      maxBytes: options.maxResponseBytes,
      errorOf: (error) => (timer.signal.aborted ? timeout : (outboundErrorIn(error) ?? error)),
      done,
    })
    return new undici.Response(body, { status: response.status, statusText: response.statusText, headers: response.headers }) as unknown as Response
  }

  return {
    fetchWithin: (timeoutMs) => (input, init) => outboundFetch(input, init, timeoutMs),
    checkBaseUrl: (raw) => checkBaseUrl(raw, (host) => checkedAddresses(host, policy, resolve, options.connectTimeoutMs)),
    maxResponseBytes: options.maxResponseBytes,
    async close() {
      const open = client
      client = undefined
      if (open !== undefined) await (await open).agent.close()
    },
  }
}

/** undici's own connector, whose sockets resolve names through the policy; IP literals (which sockets do not look up) checked first. */
function guardedConnector(undici: typeof Undici, policy: AddressPolicy, resolve: HostLookup, connectTimeoutMs: number): Undici.buildConnector.connector {
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    checkedAddresses(hostname, policy, resolve, connectTimeoutMs).then(
      (addresses) => {
        if (lookupOptions.all) return callback(null, addresses)
        const [first] = addresses as [ResolvedAddress]
        callback(null, first.address, first.family)
      },
      (error: unknown) => callback(error instanceof OutboundError ? error : new OutboundError(String(error), true), ''),
    )
  }
  const connect = undici.buildConnector({ timeout: connectTimeoutMs, lookup })
  return (target, callback) => {
    if (isIP(target.hostname) === 0) return connect(target, callback)
    checkedAddresses(target.hostname, policy, resolve, connectTimeoutMs).then(
      () => connect(target, callback),
      (error: unknown) => callback(error instanceof OutboundError ? error : new OutboundError(String(error), true), null),
    )
  }
}
