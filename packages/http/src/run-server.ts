import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'

/**
 * Listens, and closes gracefully on SIGINT/SIGTERM or a fatal error (close-with-grace: the
 * maintained way to do exactly this for Fastify). Closing the app runs every plugin's onClose
 * hook, which is where each service stops taking work and releases its connections.
 */
export async function runServer(app: FastifyInstance, listen: { host: string; port: number }, graceMs = 25_000): Promise<void> {
  closeWithGrace({ delay: graceMs }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an unexpected error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
  })
  await app.listen(listen)
}
