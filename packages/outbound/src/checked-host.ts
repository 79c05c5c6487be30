import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import type { AddressPolicy } from './address-policy.ts'
import { OutboundRefusedError } from './errors.ts'

// A host resolved once, every address checked: the connection is made to the address returned
// here, never to a second lookup's answer, so a name that resolves to a public address when
// checked and to a private one a moment later (DNS rebinding) reaches nothing it should not.

export interface ResolvedAddress {
  address: string
  family: number
}

/** How a host name is resolved: the system's resolver (getaddrinfo, /etc/hosts included) unless a test brings its own. */
export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>

export const systemLookup: HostLookup = (hostname) => lookup(hostname, { all: true, order: 'verbatim' })

const allowHint = 'allow it with OUTBOUND_ALLOW_CIDRS'

/**
 * The addresses to connect to for `host` (a name or an IP literal, without brackets), every one
 * checked. Refuses when any address it resolves to is refused: a name that also points inward is
 * not used at all.
 */
export async function checkedAddresses(host: string, policy: AddressPolicy, resolve: HostLookup, timeoutMs: number): Promise<ResolvedAddress[]> {
  const literal = isIP(host)
  if (literal !== 0) {
    const verdict = policy.verdict(host)
    if (verdict !== null) throw new OutboundRefusedError(`${host} is ${verdict}; ${allowHint}`, false)
    return [{ address: host, family: literal }]
  }
  let addresses: ResolvedAddress[]
  try {
    addresses = await withTimeout(resolve(host), timeoutMs, () => new OutboundRefusedError(`${host} did not resolve within ${timeoutMs} ms`, true))
  } catch (error) {
    if (error instanceof OutboundRefusedError) throw error
    const code = (error as { code?: unknown }).code
    // ENOTFOUND: no such name; anything else (EAI_AGAIN, …) may pass.
    throw new OutboundRefusedError(`${host} does not resolve (${typeof code === 'string' ? code : 'lookup failed'})`, code !== 'ENOTFOUND')
  }
  if (addresses.length === 0) throw new OutboundRefusedError(`${host} does not resolve (no address)`, false)
  for (const { address } of addresses) {
    const verdict = policy.verdict(address)
    if (verdict !== null) throw new OutboundRefusedError(`${host} resolves to ${address}, ${verdict}; ${allowHint}`, false)
  }
  return addresses
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), timeoutMs)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
