// The checks that tell a real card or account number from a run of digits that only looks like one.

/** The Luhn (mod 10) check every payment card number passes; `digits` holds digits only. */
export function passesLuhn(digits: string): boolean {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let digit = digits.charCodeAt(i) - 48
    if (double) {
      digit *= 2
      if (digit > 9) digit -= 9
    }
    sum += digit
    double = !double
  }
  return sum % 10 === 0
}

/** The ISO 13616 mod-97 check of an IBAN; `iban` holds upper-case letters and digits only. */
export function passesIbanChecksum(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4)
  // Letters count as two digits (A = 10 … Z = 35); the remainder is carried a digit at a time
  // so that no number exceeds 2^53.
  let remainder = 0
  for (let i = 0; i < rearranged.length; i++) {
    const code = rearranged.charCodeAt(i)
    const value = code >= 65 ? code - 55 : code - 48
    remainder = value >= 10 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97
  }
  return remainder === 1
}
