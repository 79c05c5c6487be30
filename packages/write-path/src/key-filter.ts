// A Bloom filter of strings: answers "maybe" for every key added, and "no" for nearly every key
// that was not (about 1 in 100 at ten bits a key and seven probes). Sized once for a known count.

const BITS_PER_KEY = 10
const PROBES = 7

export class KeyFilter {
  private readonly bits: Uint32Array
  private readonly size: number

  constructor(keys: number) {
    this.size = Math.max(64, keys * BITS_PER_KEY)
    this.bits = new Uint32Array(Math.ceil(this.size / 32))
  }

  add(key: string): void {
    const [a, b] = hashes(key)
    for (let i = 0; i < PROBES; i++) {
      const bit = (a + i * b) % this.size
      this.bits[bit >>> 5]! |= 1 << (bit & 31)
    }
  }

  mayHave(key: string): boolean {
    const [a, b] = hashes(key)
    for (let i = 0; i < PROBES; i++) {
      const bit = (a + i * b) % this.size
      if ((this.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false
    }
    return true
  }
}

/**
 * Two independent 32-bit FNV-1a hashes of the key's UTF-16 units (Kirsch and Mitzenmacher: the
 * probes a + i·b of two hashes are as good as seven hashes). Unsigned, and b odd so it is never 0.
 */
function hashes(key: string): [number, number] {
  let a = 0x811c9dc5
  let b = 0x01000193 ^ 0x5bd1e995
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i)
    a = Math.imul(a ^ unit, 0x01000193)
    b = Math.imul(b ^ unit, 0x5bd1e995)
    b ^= b >>> 15
  }
  return [a >>> 0, (b | 1) >>> 0]
}
