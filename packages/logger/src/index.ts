/**
 * The one logger type of every package and app. Structural, so a package takes a logger without
 * depending on pino or Fastify: `app.log`, a request's `request.log` (which carries its id) and
 * pino's own logger fit as they are, and a test passes three no-op functions. Details first, then
 * the message, as pino reads them.
 */
export interface Logger {
  info(details: object, message: string): void
  warn(details: object, message: string): void
  error(details: object, message: string): void
}
