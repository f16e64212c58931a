// A throw-away Redis for the distributed export example, its test and its benchmark: Debian's
// `redis-server` (installed by scripts/redis.sh when missing and this runs as root), started on a
// free port of 127.0.0.1 with no persistence (no RDB snapshot, no AOF), stopped with the process
// that started it. Run on its own it starts one and prints its URL until Ctrl-C:
//   npm run redis                 # REDIS_URL=redis://127.0.0.1:PORT
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, createConnection } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

const INSTALL = fileURLToPath(new URL('./redis.sh', import.meta.url))

export interface RunningRedis {
  /** `redis://127.0.0.1:PORT` */
  readonly url: string
  readonly port: number
  /** Stops the server (SIGTERM, then waits for it to exit). */
  stop(): Promise<void>
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

/** Installs redis-server if needed, starts it on a free loopback port without persistence. */
export async function startRedis(): Promise<RunningRedis> {
  ensureRedisInstalled()
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'yes',
        '--loglevel',
        'warning',
      ],
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
      if (attempt < 3) continue // the port was taken in between
      throw error
    }
    // A server left behind by a test that failed must not outlive it.
    const killOnExit = (): void => {
      child.kill('SIGKILL')
    }
    process.once('exit', killOnExit)
    const stop = async (): Promise<void> => {
      process.off('exit', killOnExit)
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      await exited
    }
    return { url: `redis://127.0.0.1:${port}`, port, stop }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const redis = await startRedis()
  process.stdout.write(`REDIS_URL=${redis.url}\n(no persistence; Ctrl-C stops it)\n`)
  const stop = (): void => void redis.stop().then(() => process.exit(0))
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}
