import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { it } from 'node:test'

// The guard connects to the address it checked, yet TLS still verifies the certificate against
// the name the URL gave: a certificate for model.test is accepted for https://model.test and
// refused for the same server reached by its address or another name. The client runs in a process
// of its own that trusts the fixture's certificate (NODE_EXTRA_CA_CERTS is read at start only).

it('verifies TLS certificates against the host name, not the checked address', { timeout: 30_000 }, async () => {
  const script = fileURLToPath(new URL('fixtures/tls-calls.ts', import.meta.url))
  const { stdout } = await promisify(execFile)(process.execPath, [script], { env: { ...process.env, NODE_EXTRA_CA_CERTS: fileURLToPath(new URL('fixtures/model-test.cert.pem', import.meta.url)) } })
  const { port, ...outcomes } = JSON.parse(stdout) as { port: number; byName: string; byAddress: string; otherName: string }
  assert.deepEqual(outcomes, { byName: `200 host model.test:${port}`, byAddress: 'ERR_TLS_CERT_ALTNAME_INVALID', otherName: 'ERR_TLS_CERT_ALTNAME_INVALID' })
})
