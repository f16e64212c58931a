/**
 * A recording loopback server (node:http, or node:https with a certificate) for the 0.2 boundary
 * tests: it records every request with the moment it arrived and the connection it came on, counts
 * connections (and TLS handshakes the client refused), and answers as each test says, after an
 * optional delay, compressed if asked. Do not enable msw in a file that uses it.
 */
import { once } from 'node:events'
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo, Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import * as zlib from 'node:zlib'
import { useServer } from './use-server.ts'

/** One request as it arrived. */
export interface Arrival {
  readonly method: string
  /** The request target exactly as sent, e.g. `/rest/v1/agents?page=1`. */
  readonly target: string
  readonly headers: IncomingHttpHeaders
  /** Raw body text ('' when none). */
  readonly body: string
  /** `performance.now()` when the whole request had arrived (same clock as the test). */
  readonly at: number
  /** Which connection it came on: 1 for the server's first connection, 2 for the next, ... */
  readonly connection: number
  /** `performance.now()` when the reply was fully handed to the socket; undefined until then. */
  sentAt?: number
}

/** Content codings the server can apply to a reply. */
export type Coding = 'gzip' | 'br' | 'zstd'

/** What to answer. */
export type Reply =
  | {
      status?: number
      headers?: Record<string, string>
      /** An object or array is sent as JSON; a string or Buffer as is. */
      body?: unknown
      /** Compress the body with this coding and say so in `content-encoding`. */
      encoding?: Coding
      /** Wait this long (ms) before answering. */
      delayMs?: number
    }
  /** Drop the connection without answering. */
  | 'destroy'
  /** Write the reply yourself (streams, bombs). */
  | { write: (res: ServerResponse) => void | Promise<void> }

export type Responder = (request: Arrival) => Reply | Promise<Reply>

export interface LoopbackServer {
  /** `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT`. */
  readonly origin: string
  readonly port: number
  /** Every request received, in order of arrival. */
  readonly arrivals: Arrival[]
  /** TCP connections accepted so far. */
  readonly connections: number
  /** TLS handshakes that failed (the client refused the certificate, ...). */
  readonly tlsClientErrors: number
  /** Replaces the responder. */
  respond(responder: Responder): void
  /** Forgets the arrivals (connection counts are kept). */
  clear(): void
  close(): Promise<void>
}

/** Compresses `data` with `coding`. */
export function encode(data: Buffer, coding: Coding): Buffer {
  switch (coding) {
    case 'gzip':
      return zlib.gzipSync(data)
    case 'br':
      return zlib.brotliCompressSync(data, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } })
    case 'zstd':
      return zlib.zstdCompressSync(data)
  }
}

/** Whether this Node can make and read zstd (22.15 and later). */
export const ZSTD = typeof zlib.zstdCompressSync === 'function'

export async function startLoopback(options: { tls?: { key: string; cert: string }; responder?: Responder } = {}): Promise<LoopbackServer> {
  const arrivals: Arrival[] = []
  let responder: Responder = options.responder ?? (() => ({ status: 404, body: { error: 'no responder' } }))
  let connections = 0
  let tlsClientErrors = 0
  const sockets = new Set<Socket>()
  /** Connection number by the client's port: the same for the TCP socket and the TLS socket over it. */
  const ids = new Map<number, number>()

  const handle = (req: import('node:http').IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const arrival: Arrival = {
        method: req.method ?? '',
        target: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
        connection: ids.get(req.socket.remotePort ?? -1) ?? 0,
      }
      arrivals.push(arrival)
      res.on('error', () => undefined)
      res.on('finish', () => {
        arrival.sentAt = performance.now()
      })
      void answer(arrival, res)
    })
  }

  const answer = async (arrival: Arrival, res: ServerResponse): Promise<void> => {
    try {
      const reply = await responder(arrival)
      if (reply === 'destroy') {
        res.socket?.destroy()
        return
      }
      if ('write' in reply) {
        await reply.write(res)
        return
      }
      if (reply.delayMs !== undefined) await sleep(reply.delayMs)
      const given = reply.body
      const json = given !== undefined && typeof given !== 'string' && !Buffer.isBuffer(given)
      let body =
        given === undefined
          ? Buffer.alloc(0)
          : Buffer.isBuffer(given)
            ? given
            : Buffer.from(typeof given === 'string' ? given : JSON.stringify(given))
      const headers: Record<string, string> = { ...(json ? { 'content-type': 'application/json' } : {}) }
      if (reply.encoding !== undefined) {
        body = encode(body, reply.encoding)
        headers['content-encoding'] = reply.encoding
      }
      Object.assign(headers, reply.headers)
      headers['content-length'] = String(body.length)
      res.writeHead(reply.status ?? 200, headers)
      res.end(body)
    } catch {
      res.socket?.destroy()
    }
  }

  const server: Server = options.tls === undefined ? createHttpServer(handle) : createHttpsServer(options.tls, handle)
  server.on('connection', (socket: Socket) => {
    connections++
    ids.set(socket.remotePort ?? -1, connections)
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
  })
  if (options.tls !== undefined) {
    server.on('secureConnection', (socket: Socket) => {
      socket.on('error', () => undefined)
    })
    server.on('tlsClientError', () => {
      tlsClientErrors++
    })
  }
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    origin: `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    port,
    arrivals,
    get connections() {
      return connections
    },
    get tlsClientErrors() {
      return tlsClientErrors
    },
    respond: (next) => {
      responder = next
    },
    clear: () => {
      arrivals.length = 0
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      })
    },
  }
}

/**
 * The loopback set-up test files share: one server for the file, started before its tests and
 * closed after them, its requests and responder cleared before each test. `started` receives the
 * server once it listens (assign it to the file's `server`).
 */
export function useLoopback(started: (server: LoopbackServer) => void): void {
  useServer(() => startLoopback(), started)
}

/** Pathname and query of a request target. */
export function targetOf(arrival: Pick<Arrival, 'target'>): { pathname: string; query: URLSearchParams } {
  const url = new URL(arrival.target, 'http://placeholder.invalid')
  return { pathname: url.pathname, query: url.searchParams }
}

/** The page number a list request asked for (`page` in the query; 1 when absent). */
export function pageOf(arrival: Pick<Arrival, 'target'>): number {
  return Number(targetOf(arrival).query.get('page') ?? '1')
}

/** Resolves once `predicate` holds (polled every 5 ms); rejects after `ms` ms. */
export async function until(predicate: () => boolean, ms = 5_000): Promise<void> {
  const deadline = performance.now() + ms
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error('Condition not met in time')
    await sleep(5)
  }
}

/**
 * Real turns of the event loop (`setImmediate`, which the fake clock tests leave real) until every
 * request that reached `server` has been answered and no new one has come for three turns: the
 * client has then read the replies and done what it does next (set its next timer). A fake clock
 * moved in big steps does not wait for sockets: on a loaded machine a reply read only after the next
 * step moved what the client did next by a whole step (a login retried each 1 s was sent 25 times
 * in 60 fake seconds, not ~60). Call it before each step. Throws after 10,000 turns (a request never
 * answered).
 */
export async function untilAnswered(server: Pick<LoopbackServer, 'arrivals'>): Promise<void> {
  let quiet = 0
  let seen = server.arrivals.length
  for (let turn = 0; turn < 10_000; turn++) {
    await new Promise((resolve) => setImmediate(resolve))
    const answered = server.arrivals.every((arrival) => arrival.sentAt !== undefined)
    quiet = answered && server.arrivals.length === seen ? quiet + 1 : 0
    seen = server.arrivals.length
    if (quiet === 3) return
  }
  throw new Error('A request to the loopback server was not answered in 10,000 turns of the event loop')
}

/** The rejection of `promise` (fails the test when it resolves). */
export async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('Expected a rejection')
}

/** A logger that records every call, level by level, with its arguments. */
export interface RecordingLogger {
  debug(message: string, ...rest: unknown[]): void
  info(message: string, ...rest: unknown[]): void
  warn(message: string, ...rest: unknown[]): void
  error(message: string, ...rest: unknown[]): void
  readonly calls: { level: 'debug' | 'info' | 'warn' | 'error'; args: unknown[] }[]
  /** The messages (first arguments) logged at `level`. */
  messages(level: 'debug' | 'info' | 'warn' | 'error'): string[]
}

export function recordingLogger(): RecordingLogger {
  const calls: RecordingLogger['calls'] = []
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]): void => {
      calls.push({ level, args })
    }
  return {
    calls,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    messages: (level) => calls.filter((call) => call.level === level).map((call) => String(call.args[0])),
  }
}
