// What the audit log never keeps, whatever a route answers or names: fields and path parameters
// whose name says they hold a credential (a password, a client secret, a token, an API key), and
// `url`, which for invitations and password resets is the link with its token in it.

const secretName = /(secret|password|passphrase|token|apikey|privatekey)$/i

export const redactedValue = '[redacted]'

export function isSecretName(name: string): boolean {
  return name === 'url' || secretName.test(name)
}

/** A copy of `value` with every secret field's value replaced by `[redacted]`. */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([name, field]) => [name, isSecretName(name) ? redactedValue : withoutSecrets(field)]))
}
