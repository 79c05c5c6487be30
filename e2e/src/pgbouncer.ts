import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '@tracewell/test-support'
import pg from 'pg'

/** Debian's pgbouncer, or undefined where it is not installed. */
export const pgbouncerBinary = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((path) => spawnSync(path, ['--version']).status === 0)

export interface OwnPgBouncer {
  port: number
  /** The URL of `database` through this PgBouncer. */
  urlOf(database: string): string
  /** Server connections PgBouncer holds to Postgres (SHOW POOLS: active + idle + used). */
  serverConnections(): Promise<number>
  stop(): Promise<void>
}

/**
 * A PgBouncer of the test's own, on a free port, in transaction pooling mode in front of the local
 * Postgres, with `poolSize` server connections per database: far fewer than the services' pools
 * ask for, so every transaction of every service shares them. It refuses to run as root, so as
 * root (CI) it runs as the postgres user.
 */
export async function startPgBouncer(options: { postgresPort: number; poolSize: number }): Promise<OwnPgBouncer> {
  if (!pgbouncerBinary) throw new Error('pgbouncer is not installed (apt-get install pgbouncer)')
  const dir = mkdtempSync(join(tmpdir(), 'tracewell-pgbouncer-'))
  chmodSync(dir, 0o777)
  const port = await freePort()
  const ini = join(dir, 'pgbouncer.ini')
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n')
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=127.0.0.1 port=${options.postgresPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'admin_users = postgres',
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize}`,
      'max_client_conn = 1000',
      'ignore_startup_parameters = extra_float_digits,options',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  )
  for (const file of ['pgbouncer.ini', 'userlist.txt']) chmodSync(join(dir, file), 0o644)
  const asRoot = process.getuid?.() === 0
  // setpriv execs pgbouncer itself (no process in between), so stop() signals pgbouncer.
  const child: ChildProcess = asRoot
    ? spawn('setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', pgbouncerBinary, ini], { stdio: 'ignore' })
    : spawn(pgbouncerBinary, [ini], { stdio: 'ignore' })
  const admin = () => new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/pgbouncer` })
  for (let attempt = 0; ; attempt++) {
    const client = admin()
    try {
      await client.connect()
      await client.end()
      break
    } catch (error) {
      await client.end().catch(() => {})
      if (attempt > 100 || child.exitCode !== null) throw new Error(`pgbouncer did not start: ${String(error)}`, { cause: error })
      await sleep(100)
    }
  }
  return {
    port,
    urlOf: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async serverConnections() {
      const client = admin()
      await client.connect()
      try {
        // The admin console speaks the simple query protocol only.
        const { rows } = await client.query<{ database: string; sv_active: string; sv_idle: string; sv_used: string }>({ text: 'SHOW POOLS', queryMode: 'simple' } as pg.QueryConfig)
        return rows.filter((row) => row.database !== 'pgbouncer').reduce((sum, row) => sum + Number(row.sv_active) + Number(row.sv_idle) + Number(row.sv_used), 0)
      } finally {
        await client.end()
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
