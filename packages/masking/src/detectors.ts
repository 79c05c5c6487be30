import { isIP } from 'node:net'
import { passesIbanChecksum, passesLuhn } from './checksums.ts'

// The built-in detectors. Their patterns are ours, not a user's, so they run in V8's own engine
// (several times faster than a linear-time one): every repetition is bounded or followed by a
// character it cannot match, so no input makes them backtrack more than a constant per position.
// A candidate the pattern finds is kept when its check (Luhn, mod 97, address syntax) fails.

export const DETECTOR_NAMES = ['email', 'phone', 'credit_card', 'iban', 'ip', 'secret', 'regex'] as const
export type DetectorName = (typeof DETECTOR_NAMES)[number]
export type BuiltInDetectorName = Exclude<DetectorName, 'regex'>

export interface BuiltInDetector {
  /**
   * Global: every candidate in a text. With `leftGroup`, group 1 (in a lookbehind) is the part of
   * the candidate before the match, so that the pattern can start on a rare character.
   */
  pattern: RegExp
  leftGroup?: boolean
  /** Whether a candidate is what the detector looks for; absent: every candidate is. */
  accepts?: (candidate: string) => boolean
  /** A cheap test that the text may hold a candidate at all, so most texts skip the pattern. */
  mayContain: (text: string) => boolean
}

const DATE = /^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{4}$/
const DOTTED_QUAD = /^\d{1,3}(?:\.\d{1,3}){3}$/
const THOUSANDS = /^\d{1,3}(?:[ .,]\d{3})+$/

const hasDigit = (text: string) => /\d/.test(text)

// Where the pattern is cheaper than a look for a digit (measured on LLM prompts, which mostly
// hold one), only a text too short to hold a candidate is skipped.
const atLeast = (length: number) => (text: string) => text.length >= length

const digitsOf = (text: string) => text.replace(/\D/g, '')

export const builtInDetectors: Record<BuiltInDetectorName, BuiltInDetector> = {
  // RFC 5321 caps the local part at 64 characters and a label at 63: the bounds keep the search
  // linear. The pattern starts on the @ (the local part is read by a lookbehind), so that V8 jumps
  // from one @ to the next instead of trying every position of a long prompt.
  email: {
    pattern: /(?<=(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-]{1,64}))@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?){0,8}\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g,
    leftGroup: true,
    mayContain: (text) => text.includes('@'),
  },
  // E.164 allows 15 digits; 8 is the shortest national number worth hiding. A run of digits alone
  // (an id, a timestamp) is a phone number only when written with a leading + or separators.
  phone: {
    pattern: /(?<![\w+.-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}(?![\w.-]?\d)|(?<![\w+])\+\d{8,15}(?!\d)/g,
    accepts: (candidate) => {
      const count = digitsOf(candidate).length
      if (count < 8 || count > 15) return false
      if (candidate.startsWith('+') || candidate.includes('(')) return true
      // Without a country code or an area code in brackets, the shapes that are something else:
      // dates (2026-12-06), dotted quads (10.20.30.40), numbers grouped by thousands (100 000 000).
      return !DATE.test(candidate) && !DOTTED_QUAD.test(candidate) && !THOUSANDS.test(candidate)
    },
    mayContain: atLeast(8),
  },
  // 13 to 19 digits, optionally grouped by spaces or dashes, that pass the Luhn check.
  credit_card: {
    pattern: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])/g,
    accepts: (candidate) => passesLuhn(digitsOf(candidate)),
    mayContain: atLeast(13),
  },
  // Country code, two check digits, then 11–30 letters and digits, optionally in groups of four.
  iban: {
    pattern: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])/g,
    accepts: (candidate) => passesIbanChecksum(candidate.replace(/ /g, '')),
    mayContain: hasDigit,
  },
  // IPv4 in dotted quads, IPv6 in any of its spellings; node:net decides what is an address.
  ip: {
    pattern: /(?<![\w.:])(?:(?:\d{1,3}\.){3}\d{1,3}|(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?)(?![\w.:])/g,
    accepts: (candidate) => isIP(candidate) !== 0,
    mayContain: (text) => text.includes('.') || text.includes(':'),
  },
  // API keys and tokens of the common providers: OpenAI and Anthropic (sk-…), GitHub (ghp_…,
  // github_pat_…), AWS access key ids, Google API keys, Slack, Stripe, Hugging Face, and JWTs
  // and other bearer tokens.
  secret: {
    pattern: new RegExp(
      [
        String.raw`\bsk-[A-Za-z0-9_-]{20,512}`,
        String.raw`\bgh[pousr]_[A-Za-z0-9]{36,255}`,
        String.raw`\bgithub_pat_[A-Za-z0-9_]{22,255}`,
        String.raw`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`,
        String.raw`\bAIza[0-9A-Za-z_-]{35}`,
        String.raw`\bxox[abposr]-[A-Za-z0-9-]{10,255}`,
        String.raw`\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,255}`,
        String.raw`\bhf_[A-Za-z0-9]{30,255}`,
        String.raw`\beyJ[A-Za-z0-9_-]{5,4096}\.eyJ[A-Za-z0-9_-]{5,8192}\.[A-Za-z0-9_-]{0,4096}`,
        String.raw`\b[Bb]earer [A-Za-z0-9._~+/-]{20,4096}=*`,
      ].join('|'),
      'g',
    ),
    mayContain: (text) => text.length >= 20,
  },
}
