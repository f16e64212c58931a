// A throw-away Redis for the distributed export example, its test and its benchmark: Debian's
// `redis-server` (installed by scripts/redis.sh when missing and this runs as root), started on a
// free port of 127.0.0.1, by default with no persistence (no RDB snapshot, no AOF), stopped with
// the process that started it. The example's test restarts it mid-run (`restart()`), without
// persistence and with AOF (`startRedis({ appendOnlyDir })`). Run on its own it starts one and
// prints its URL until Ctrl-C:
//   npm run redis                 # REDIS_URL=redis://127.0.0.1:PORT
//   npm run redis -- --aof DIR    # the same with an append-only file in DIR (survives a restart)
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync } from 'node:fs'
import { createServer, createConnection } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const INSTALL = fileURLToPath(new URL('./redis.sh', import.meta.url))

export interface RunningRedis {
  /** `redis://127.0.0.1:PORT` */
  readonly url: string
  readonly port: number
  /** Stops the server (SIGTERM, then waits for it to exit). */
  stop(): Promise<void>
  /**
   * Stops the server (SIGTERM; nothing, after `stop()`) and starts a new one on the same port with
   * the same settings: without persistence it comes back empty; with `appendOnlyDir` it reloads
   * its AOF. Resolves once it accepts connections again.
   */
  restart(): Promise<void>
}

/** Options of {@link startRedis}. */
export interface RedisOptions {
  /**
   * A directory for an append-only file (AOF, `appendfsync everysec`): the data outlives a
   * restart. Default: none, no persistence at all.
   */
  readonly appendOnlyDir?: string | undefined
}

/**
 * Makes sure `redis-server` is installed: scripts/redis.sh installs Debian's package when it is
 * missing and this runs as root, and otherwise fails with a message saying how to install it.
 */
export function ensureRedisInstalled(): void {
  try {
    execFileSync('bash', [INSTALL], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string }
    throw new Error(`redis-server is needed and could not be installed: ${(stderr ?? '') || (stdout ?? '') || String(error)}`, {
      cause: error,
    })
  }
}

/** A port of 127.0.0.1 that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  await once(server, 'close')
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** Resolves once something accepts connections on `port`, or rejects when `child` exits first. */
async function accepting(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`redis-server exited: ${output()}`)
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' })
      socket.once('connect', () => {
        socket.end()
        resolve(true)
      })
      socket.once('error', () => {
        resolve(false)
      })
    })
    if (ok) return
    await sleep(25)
  }
  throw new Error(`redis-server did not accept connections on port ${port}: ${output()}`)
}

/** A redis-server on `port` that accepts connections; rejects when it exits first. */
async function spawnRedis(port: number, options: RedisOptions): Promise<{ child: ChildProcess; exited: Promise<unknown> }> {
  const persistence =
    options.appendOnlyDir === undefined
      ? ['--appendonly', 'no']
      : ['--appendonly', 'yes', '--appendfsync', 'everysec', '--dir', options.appendOnlyDir]
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--protected-mode', 'yes', '--loglevel', 'warning'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const exited = once(child, 'exit')
  try {
    await accepting(port, child, () => output)
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  return { child, exited }
}

/** Installs redis-server if needed, starts it on a free loopback port (without persistence unless `appendOnlyDir`). */
export async function startRedis(options: RedisOptions = {}): Promise<RunningRedis> {
  ensureRedisInstalled()
  if (options.appendOnlyDir !== undefined) mkdirSync(options.appendOnlyDir, { recursive: true })
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    let server: { child: ChildProcess; exited: Promise<unknown> }
    try {
      server = await spawnRedis(port, options)
    } catch (error) {
      if (attempt < 3) continue // the port was taken in between
      throw error
    }
    // A server left behind by a test that failed must not outlive it.
    const killOnExit = (): void => {
      server.child.kill('SIGKILL')
    }
    process.once('exit', killOnExit)
    const running = (): boolean => server.child.exitCode === null && server.child.signalCode === null
    const stop = async (): Promise<void> => {
      process.off('exit', killOnExit)
      if (!running()) return
      server.child.kill('SIGTERM')
      await server.exited
    }
    const restart = async (): Promise<void> => {
      if (running()) {
        server.child.kill('SIGTERM')
        await server.exited
      }
      server = await spawnRedis(port, options)
      process.off('exit', killOnExit) // once, also after a stop()
      process.once('exit', killOnExit)
    }
    return { url: `redis://127.0.0.1:${port}`, port, stop, restart }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // `npm run redis -- --aof DIR`: with an append-only file in DIR (the persistence the example needs).
  const { values } = parseArgs({ options: { aof: { type: 'string' } } })
  const redis = await startRedis({ appendOnlyDir: values.aof })
  const persistence = values.aof === undefined ? 'no persistence' : `AOF in ${values.aof}`
  process.stdout.write(`REDIS_URL=${redis.url}\n(${persistence}; Ctrl-C stops it)\n`)
  const stop = (): void => void redis.stop().then(() => process.exit(0))
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}
