import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'

// Fastify's entry point does not export these pino types by name.
type ChildLoggerFactory = NonNullable<FastifyServerOptions['childLoggerFactory']>
type Bindings = Parameters<ChildLoggerFactory>[1]
type ChildLoggerOptions = Parameters<ChildLoggerFactory>[2]

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type PinoLogger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean }

/**
 * `request.log`, made a real pino child (with the request id bound) only when something is logged
 * at an enabled level. Fastify makes a child logger for every request, and pino's `child()` costs
 * a few µs (it serialises the bindings); at the levels the services run at, most requests never
 * log. What is written is the same as with an eager child: the child is made from the same
 * parent, bindings and options, just later.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  readonly #parent: PinoLogger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions
  #child: FastifyBaseLogger | undefined

  constructor(parent: PinoLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  get level(): string {
    return (this.#child ?? this.#parent).level
  }

  set level(level: string) {
    this.#logger().level = level
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args)
  }

  error(...args: unknown[]): void {
    this.#log('error', args)
  }

  warn(...args: unknown[]): void {
    this.#log('warn', args)
  }

  info(...args: unknown[]): void {
    this.#log('info', args)
  }

  debug(...args: unknown[]): void {
    this.#log('debug', args)
  }

  trace(...args: unknown[]): void {
    this.#log('trace', args)
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options)
  }

  #logger(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options)
    return this.#child
  }

  #log(level: Level, args: unknown[]): void {
    // Once made, the child decides (its level may have been changed through this logger).
    if (this.#child === undefined && !this.#parent.isLevelEnabled(level)) return
    const logger = this.#logger()
    Reflect.apply(logger[level], logger, args)
  }
}

function isPino(logger: FastifyBaseLogger): logger is PinoLogger {
  return typeof (logger as Partial<PinoLogger>).isLevelEnabled === 'function'
}

/** Fastify's `childLoggerFactory`: a lazy child when it can be, otherwise what Fastify does itself. */
export const lazyRequestLoggerFactory: ChildLoggerFactory = (logger, bindings, options) => {
  // With a route-level log level, the parent cannot tell which calls the child would write.
  if (!isPino(logger) || options.level !== undefined) return logger.child(bindings, options)
  return new LazyRequestLogger(logger, bindings, options)
}
