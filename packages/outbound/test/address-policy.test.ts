import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createAddressPolicy, parseAllowCidrs } from '../src/index.ts'

// The outbound policy's ranges, IPv4 and IPv6, the IPv6 forms that carry an IPv4 address, and
// OUTBOUND_ALLOW_CIDRS opening some of them.

describe('the outbound address policy', () => {
  const policy = createAddressPolicy([])

  it('refuses every inward range by name, IPv4 and IPv6', () => {
    const cases: Array<[string, string]> = [
      ['127.0.0.1', 'a loopback address'],
      ['127.255.0.9', 'a loopback address'],
      ['::1', 'a loopback address'],
      ['10.1.2.3', 'a private address (RFC 1918)'],
      ['172.16.0.1', 'a private address (RFC 1918)'],
      ['172.31.255.255', 'a private address (RFC 1918)'],
      ['192.168.1.1', 'a private address (RFC 1918)'],
      ['fc00::1', 'a unique-local address (fc00::/7)'],
      ['fd12:3456::1', 'a unique-local address (fc00::/7)'],
      ['169.254.1.1', 'a link-local address'],
      ['fe80::1', 'a link-local address'],
      ['169.254.169.254', 'a cloud metadata address'],
      ['169.254.170.2', 'a cloud metadata address'],
      ['fd00:ec2::254', 'a cloud metadata address'],
      ['100.100.100.200', 'a cloud metadata address'],
      ['100.64.0.1', 'a shared address (carrier-grade NAT, RFC 6598)'],
      ['100.127.255.254', 'a shared address (carrier-grade NAT, RFC 6598)'],
      ['224.0.0.1', 'a multicast address'],
      ['ff02::1', 'a multicast address'],
      ['0.0.0.0', 'an unspecified address'],
      ['::', 'an unspecified address'],
      ['255.255.255.255', 'the broadcast address'],
      ['192.0.2.10', 'a reserved address (documentation, benchmarking or future use)'],
      ['2001:db8::1', 'a reserved address (documentation, benchmarking or future use)'],
      ['::ffff:127.0.0.1', 'an IPv4-mapped address of 127.0.0.1, a loopback address'],
      ['::ffff:10.0.0.1', 'an IPv4-mapped address of 10.0.0.1, a private address (RFC 1918)'],
      ['::ffff:169.254.169.254', 'an IPv4-mapped address of 169.254.169.254, a cloud metadata address'],
      ['::ffff:a00:1', 'an IPv4-mapped address of 10.0.0.1, a private address (RFC 1918)'],
      ['::a00:1', 'an IPv6 address embedding 10.0.0.1, a private address (RFC 1918)'],
      ['64:ff9b::7f00:1', 'an IPv6 address embedding 127.0.0.1, a loopback address'],
    ]
    for (const [address, rule] of cases) assert.equal(policy.verdict(address), rule, address)
  })

  it('lets public addresses through, the edges of the ranges included', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '169.255.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
      assert.equal(policy.verdict(address), null, address)
    }
  })

  it('allows what OUTBOUND_ALLOW_CIDRS names, and only that', () => {
    const allowing = createAddressPolicy(parseAllowCidrs('127.0.0.1/32, 10.8.0.0/16,fd00::/8'))
    assert.deepEqual(['127.0.0.1', '::ffff:127.0.0.1', '10.8.3.4', 'fd00::5'].map((address) => allowing.verdict(address)), [null, null, null, null])
    assert.deepEqual(['127.0.0.2', '10.9.0.1', 'fc00::1', '::1'].map((address) => allowing.verdict(address)), [
      'a loopback address', 'a private address (RFC 1918)', 'a unique-local address (fc00::/7)', 'a loopback address',
    ])
  })

  it('refuses a list entry that is not a CIDR, naming it', () => {
    assert.throws(() => parseAllowCidrs('127.0.0.1/32,localhost'), { message: 'OUTBOUND_ALLOW_CIDRS: "localhost" is not a CIDR such as 127.0.0.1/32 or fd00::/8' })
    assert.throws(() => parseAllowCidrs('10.0.0.0/33'), /"10\.0\.0\.0\/33" is not a CIDR/)
    assert.deepEqual(parseAllowCidrs(''), [])
  })
})
