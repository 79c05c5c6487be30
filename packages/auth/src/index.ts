export { displayPrefix, generateApiKey, hashApiKey, secretsMatch, type KeyKind } from './keys.ts'
export { ApiKeyVerifier, KeyStoreUnavailableError, type ApiKeyVerifierOptions, type KeyRecord, type VerifiedKey } from './api-key-verifier.ts'
export { presentedApiKey, type CredentialHeaders } from './presented-api-key.ts'
export { encryptionKeyOf, openSecret, sealSecret } from './secret-box.ts'
