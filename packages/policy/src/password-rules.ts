/** The rule every new password meets (NIST SP 800-63B: length, not composition). */
export const passwordRules = { minLength: 12, maxLength: 256 } as const
