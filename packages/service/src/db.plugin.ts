import { sql, type Db } from '@tracewell/db'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    db: Db
  }
}

export interface DbPluginOptions {
  db: Db
  /** Whether closing the app destroys the pool; false when the caller shares it with others. */
  closeOnShutdown: boolean
}

/** Makes the database available to every route as `app.db`. */
export const dbPlugin = fp<DbPluginOptions>(
  async (app, options) => {
    app.decorate('db', options.db)
    if (options.closeOnShutdown) app.addHook('onClose', async () => options.db.destroy())
  },
  { name: 'db', fastify: '5.x' },
)

/** A readiness check: the database answers a trivial query. */
export const databaseAnswers = (db: Db) => async () => sql`select 1`.execute(db)
