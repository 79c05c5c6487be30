import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const pgVersion = readdirSync('/usr/lib/postgresql').sort().at(-1) ?? '15'
const pgBin = (name: string) => `/usr/lib/postgresql/${pgVersion}/bin/${name}`

/**
 * A throwaway Postgres cluster of a test's own (initdb in a temp dir, run as user postgres, on a
 * private port), so that a test can stop it, or make a streaming replica of it, without touching
 * the shared server on 5432. initdb's default pg_hba.conf trusts replication connections from
 * 127.0.0.1, and wal_level defaults to replica: `replicaOf` needs nothing more.
 */
export class OwnPostgres {
  readonly port: number
  readonly dir: string

  constructor(port: number) {
    this.port = port
    this.dir = mkdtempSync(join(tmpdir(), 'tracewell-pg-'))
    chmodSync(this.dir, 0o777)
  }

  get url(): string {
    return this.urlOf('postgres')
  }

  urlOf(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`
  }

  async #asPostgres(command: string, args: string[]): Promise<void> {
    await run('su', ['postgres', '-c', [pgBin(command), ...args.map((arg) => `'${arg}'`)].join(' ')])
  }

  /** A new cluster, started. */
  async init(): Promise<void> {
    await this.#asPostgres('initdb', ['-D', join(this.dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync'])
    await this.start()
  }

  /** A streaming replica of `primary` (pg_basebackup -R: it follows the primary from then on), started. */
  async initReplicaOf(primary: OwnPostgres): Promise<void> {
    await this.#asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', join(this.dir, 'data'), '-R', '-X', 'stream', '--no-sync'])
    await this.start()
  }

  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`
    await this.#asPostgres('pg_ctl', ['-D', join(this.dir, 'data'), '-o', options, '-l', join(this.dir, 'log'), '-w', 'start'])
  }

  async stop(): Promise<void> {
    await this.#asPostgres('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']).catch(() => {})
  }

  async destroy(): Promise<void> {
    await this.stop()
    rmSync(this.dir, { recursive: true, force: true })
  }
}
