import ipaddr from 'ipaddr.js'

// Which addresses an outbound call may connect to (docs/operations.md#outbound-policy): any public
// address, none of the ranges below unless OUTBOUND_ALLOW_CIDRS names them. A base URL is chosen by
// whoever creates an LLM connection, so without this a model call could reach the services beside
// Tracewell, its own routes or the cloud's metadata service. ipaddr.js parses and matches (it is
// what Fastify's proxy-addr uses): an IPv4-mapped IPv6 address is judged as the IPv4 address it is.

type Address = ipaddr.IPv4 | ipaddr.IPv6
type Cidr = [Address, number]

const cidr = (text: string): Cidr => ipaddr.parseCIDR(text)

// First match names the rule: the metadata addresses come before the ranges that hold them.
const refusedRanges: Array<[rule: string, ranges: Cidr[]]> = [
  ['a cloud metadata address', ['169.254.169.254/32', '169.254.170.2/32', '100.100.100.200/32', '192.0.0.192/32', 'fd00:ec2::254/128'].map(cidr)],
  ['an unspecified address', ['0.0.0.0/8', '::/128'].map(cidr)],
  ['a loopback address', ['127.0.0.0/8', '::1/128'].map(cidr)],
  ['a private address (RFC 1918)', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'].map(cidr)],
  ['a shared address (carrier-grade NAT, RFC 6598)', ['100.64.0.0/10'].map(cidr)],
  ['a link-local address', ['169.254.0.0/16', 'fe80::/10'].map(cidr)],
  ['a unique-local address (fc00::/7)', ['fc00::/7', 'fec0::/10'].map(cidr)],
  ['a multicast address', ['224.0.0.0/4', 'ff00::/8'].map(cidr)],
  ['the broadcast address', ['255.255.255.255/32'].map(cidr)],
  [
    'a reserved address (documentation, benchmarking or future use)',
    ['192.0.0.0/24', '192.0.2.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '240.0.0.0/4', '100::/64', '2001:db8::/32'].map(cidr),
  ],
]

// IPv6 addresses that carry an IPv4 address a router or the kernel delivers to: IPv4-compatible
// (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d, RFC 6052) are judged by the IPv4 address too.
const embeddingRanges: Cidr[] = ['::/96', '64:ff9b::/96'].map(cidr)

/** Why an address is refused (e.g. "a private address (RFC 1918)"), or null when a call may connect to it. */
export type AddressVerdict = string | null

export interface AddressPolicy {
  verdict(address: string): AddressVerdict
}

/** OUTBOUND_ALLOW_CIDRS's list parsed; throws naming the first entry that is not a CIDR. */
export function parseAllowCidrs(list: string): Cidr[] {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      if (!ipaddr.isValidCIDR(entry)) throw new Error(`OUTBOUND_ALLOW_CIDRS: ${JSON.stringify(entry)} is not a CIDR such as 127.0.0.1/32 or fd00::/8`)
      return cidr(entry)
    })
}

const matches = (address: Address, [range, bits]: Cidr) => address.kind() === range.kind() && address.match(range, bits)

export function createAddressPolicy(allowCidrs: readonly Cidr[]): AddressPolicy {
  const allowed = (address: Address) => allowCidrs.some((range) => matches(address, range))
  function judge(address: Address): AddressVerdict {
    if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
      const v4 = (address as ipaddr.IPv6).toIPv4Address()
      const inner = judge(v4)
      return inner === null ? null : `an IPv4-mapped address of ${v4.toString()}, ${inner}`
    }
    if (allowed(address)) return null
    for (const [rule, ranges] of refusedRanges) if (ranges.some((range) => matches(address, range))) return rule
    if (embeddingRanges.some((range) => matches(address, range))) {
      const v4 = ipaddr.fromByteArray(address.toByteArray().slice(12))
      const inner = judge(v4)
      return inner === null ? null : `an IPv6 address embedding ${v4.toString()}, ${inner}`
    }
    return null
  }
  return {
    verdict(text) {
      if (!ipaddr.isValid(text)) return 'not an IP address'
      return judge(ipaddr.parse(text))
    },
  }
}
