import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { consoleDistDir } from '@tracewell/console'
import fp from 'fastify-plugin'
import { sharedPageHeaders } from '../collaboration/shared-page-headers.ts'

export interface ConsoleAssetsOptions {
  /** What `vite build` wrote: index.html and assets/; @tracewell/console's dist/ unless a test brings its own. */
  distDir?: string | undefined
}

/**
 * The console's page is a script and its styles from this origin, nothing else: no inline
 * script, no other host, no framing (clickjacking), and requests only back to this server.
 */
const pageHeaders = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  // The page names its assets by content hash: it must be asked for again, they never.
  'cache-control': 'no-cache',
} as const

/** Paths that are never the console's: an unknown route there is a JSON 404, as before the console. */
const apiPath = /^\/(api|v1|assets)(\/|$)/

/**
 * Serves the console at `/`: its hashed assets under /assets/ (cached for a year, pre-compressed
 * gzip and brotli when the client takes them), and its page for every other GET that no route
 * answers, so a deep link such as /traces/<id> opens the console there (the console's router
 * takes it from the URL). Unknown /api/ and /v1/ routes stay JSON 404s. Registered at the root:
 * it sets the app's not-found handler.
 */
export const consoleAssetsPlugin = fp<ConsoleAssetsOptions>(
  async (app, options) => {
    const distDir = options.distDir ?? consoleDistDir
    const page = await readFile(join(distDir, 'index.html'), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null
      throw error
    })
    if (page === null) {
      app.log.warn({ distDir }, 'the console is not built, so it is not served: run `npm run build -w @tracewell/console`')
    } else {
      await app.register(fastifyStatic, {
        root: join(distDir, 'assets'),
        prefix: '/assets/',
        decorateReply: false,
        index: false,
        dotfiles: 'ignore',
        preCompressed: true,
        maxAge: '365d',
        immutable: true,
        setHeaders: (reply) => void reply.header('x-content-type-options', 'nosniff'),
      })
    }

    function sendPage(reply: FastifyReply) {
      if (page === null) {
        return reply.code(503).type('text/plain; charset=utf-8').send('The console is not built: run `npm run build -w @tracewell/console`, then restart.\n')
      }
      return reply.headers(pageHeaders).type('text/html; charset=utf-8').send(page)
    }

    app.get('/', { schema: { hide: true } }, (_request, reply) => sendPage(reply))
    app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split('?')[0] ?? '/'
      if ((request.method === 'GET' || request.method === 'HEAD') && !apiPath.test(path)) {
        if (path.startsWith('/shared/')) void reply.headers(sharedPageHeaders)
        return sendPage(reply)
      }
      return reply.code(404).send({ message: `Route ${request.method} ${path} not found` })
    })
  },
  { name: 'console-assets', fastify: '5.x' },
)
