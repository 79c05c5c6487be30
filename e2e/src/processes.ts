import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { freePort } from '@tracewell/test-support'

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url))

export { freePort }

export interface RunningService {
  name: string
  url: string
  /** host:port of the OTLP/gRPC receiver (ingest and npm start listen there; the others ignore GRPC_PORT). */
  grpcAddress: string
  process: ChildProcess
  /** Everything the process printed, for assertions and for failure reports. */
  output(): string
  stop(): Promise<void>
}

/**
 * Starts one of the repository's entry points as a separate process (with this same Node 24)
 * and waits until its /readyz answers 200.
 */
export async function startService(name: string, entry: string, env: Record<string, string>, readyTimeoutMs = 60_000): Promise<RunningService> {
  const port = Number(env.PORT ?? (await freePort()))
  const grpcPort = Number(env.GRPC_PORT ?? (await freePort()))
  const child = spawn(process.execPath, [entry], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env, PORT: String(port), GRPC_PORT: String(grpcPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const url = `http://127.0.0.1:${port}`
  const service: RunningService = {
    name,
    url,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    process: child,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
  const deadline = Date.now() + readyTimeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${output}`)
    try {
      const response = await fetch(`${url}/readyz`)
      if (response.ok) return service
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await service.stop()
      throw new Error(`${name} was not ready within ${readyTimeoutMs} ms:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** Polls until `probe` returns a value (not undefined) or the time is up. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 150))
  }
}
