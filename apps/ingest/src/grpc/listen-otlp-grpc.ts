import type { App } from '@tracewell/http'

/**
 * Starts the OTLP/gRPC receiver of a process that is already serving HTTP. A port that cannot be
 * bound (another collector on 4317, say) stops the process with one line naming GRPC_PORT rather
 * than leaving exporters to fail without a word.
 */
export async function listenOtlpGrpcOrExit(app: App, address: { host: string; port: number }): Promise<void> {
  try {
    await app.otlpGrpc.listen(address)
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`)
    await app.close()
    process.exit(1)
  }
}
