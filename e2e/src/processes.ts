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
 * and waits until its /readyz answers 200. A port found free can be taken by another process
 * before the service binds it (tests start several services, and other suites run beside these):
 * a service that exits for an address in use is started again on other ports.
 */
export async function startService(name: string, entry: string, env: Record<string, string>, readyTimeoutMs = 60_000): Promise<RunningService> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServiceOnce(name, entry, env, readyTimeoutMs)
    } catch (error) {
      const portTaken = error instanceof Error && /EADDRINUSE/.test(error.message)
      if (!portTaken || attempt >= 3 || (env.PORT !== undefined && env.GRPC_PORT !== undefined)) throw error
    }
  }
}

async function startServiceOnce(name: string, entry: string, env: Record<string, string>, readyTimeoutMs: number): Promise<RunningService> {
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

/**
 * Starts services side by side; if one cannot start, stops those that did before failing, so no
 * process outlives the test (a live child keeps the test runner waiting).
 */
export async function startAll<T extends ReadonlyArray<() => Promise<RunningService>>>(starts: T): Promise<{ -readonly [K in keyof T]: RunningService }> {
  const outcomes = await Promise.allSettled(starts.map((start) => start()))
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
  if (failed === undefined) return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<RunningService>).value) as { -readonly [K in keyof T]: RunningService }
  await Promise.all(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.stop() : undefined)))
  throw failed.reason
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
