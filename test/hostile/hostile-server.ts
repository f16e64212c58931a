/**
 * A hostile server for the `test/hostile/` suite: a raw `node:net` server on 127.0.0.1 that reads
 * each HTTP/1.1 request (request line, headers, a `content-length` or chunked body) and answers
 * with EXACTLY the bytes a test gives: a status line a real server would not send, a header no
 * framework would let through, a body cut mid-token, a `100 Continue` before the answer, a socket
 * dropped half-way. `node:http` would fix up most of those; this sends them as written.
 *
 * Helpers build the ordinary cases (`response()`, `json()`), and {@link guardProcess} checks what
 * the 0.2 probe found good and every hostile test keeps: no unhandled rejection, no uncaught
 * exception, no prototype pollution; {@link HostileServer.open} shows a leaked socket.
 *
 * Do not enable msw in a file that uses it (msw would intercept these requests).
 */
import { once } from 'node:events'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { afterEach, beforeEach, expect } from 'vitest'
import { useServer } from '../helpers/use-server.ts'

/** One request as it arrived. */
export interface RawRequest {
  readonly method: string
  /** The request target exactly as sent, e.g. `/rest/v1/customer-users/%2E%2E`. */
  readonly target: string
  /** Header names lower-cased; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>
  /** The body bytes (chunked bodies de-chunked). */
  readonly body: Buffer
  /** The body as UTF-8 text. */
  readonly text: string
  /** Which connection it came on: 1 for the server's first, 2 for the next, ... */
  readonly connection: number
}

/**
 * What to answer:
 * - bytes (a string is sent as UTF-8, a Buffer as is; several are written in order), the
 *   connection then stays open for the next request (keep-alive) unless `close` is set;
 * - `DESTROY`: drop the connection without a byte;
 * - `HANG`: never answer (the client's deadline or signal must end it).
 */
export type RawReply =
  string | Buffer | { readonly chunks: readonly (string | Buffer)[]; readonly close?: boolean } | typeof DESTROY | typeof HANG

/** A {@link RawReply}: drop the connection without answering. */
export const DESTROY: unique symbol = Symbol('destroy')
/** A {@link RawReply}: never answer. */
export const HANG: unique symbol = Symbol('hang')

export type RawResponder = (request: RawRequest) => RawReply | Promise<RawReply>

export interface HostileServer {
  /** `http://127.0.0.1:PORT`: a base URL for the client. */
  readonly origin: string
  /** Every request received, in order of arrival. */
  readonly requests: RawRequest[]
  /** Connections accepted so far. */
  readonly connections: number
  /** Connections open now: 0 once every client that used the server is closed (no leaked socket). */
  readonly open: number
  /** Replaces the responder. */
  respond(responder: RawResponder): void
  /** Forgets the requests received (connection counts are kept). */
  clear(): void
  close(): Promise<void>
}

/** Starts a hostile server; without a responder it answers 404 with an empty body. */
export async function startHostileServer(responder?: RawResponder): Promise<HostileServer> {
  let current: RawResponder = responder ?? (() => response(404, {}, ''))
  const requests: RawRequest[] = []
  const sockets = new Set<Socket>()
  let connections = 0

  const server = createServer((socket) => {
    const connection = ++connections
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
    let buffered = Buffer.alloc(0)
    // One request at a time per connection (the SDK does not pipeline): answering is serialised.
    let busy = Promise.resolve()
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      for (;;) {
        const parsed = parseRequest(buffered, connection)
        if (parsed === undefined) return
        buffered = buffered.subarray(parsed.consumed)
        const request = parsed.request
        requests.push(request)
        busy = busy.then(() => answer(socket, request))
      }
    })
  })

  const answer = async (socket: Socket, request: RawRequest): Promise<void> => {
    let reply: RawReply
    try {
      reply = await current(request)
    } catch {
      socket.destroy()
      return
    }
    if (socket.destroyed || reply === HANG) return
    if (reply === DESTROY) {
      socket.destroy()
      return
    }
    const { chunks, close } = typeof reply === 'string' || Buffer.isBuffer(reply) ? { chunks: [reply], close: false } : reply
    for (const chunk of chunks) socket.write(chunk)
    if (close === true) socket.end()
  }

  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    get connections() {
      return connections
    },
    get open() {
      return sockets.size
    },
    respond: (next) => {
      current = next
    },
    clear: () => {
      requests.length = 0
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

const HEAD_END = Buffer.from('\r\n\r\n')

/** One complete request at the start of `data`, and how many bytes it took; `undefined` until it has all arrived. */
function parseRequest(data: Buffer, connection: number): { request: RawRequest; consumed: number } | undefined {
  const headEnd = data.indexOf(HEAD_END)
  if (headEnd < 0) return undefined
  const [requestLine = '', ...lines] = data.subarray(0, headEnd).toString('latin1').split('\r\n')
  const [method = '', target = ''] = requestLine.split(' ')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = name in headers ? `${headers[name] ?? ''}, ${value}` : value
  }
  let offset = headEnd + HEAD_END.length
  let body: Buffer
  if ((headers['transfer-encoding'] ?? '').toLowerCase().includes('chunked')) {
    const parts: Buffer[] = []
    for (;;) {
      const lineEnd = data.indexOf('\r\n', offset)
      if (lineEnd < 0) return undefined
      const size = Number.parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16)
      const start = lineEnd + 2
      if (data.length < start + size + 2) return undefined
      offset = start + size + 2
      if (size === 0) break
      parts.push(data.subarray(start, start + size))
    }
    body = Buffer.concat(parts)
  } else {
    const length = Number(headers['content-length'] ?? '0')
    if (data.length < offset + length) return undefined
    body = data.subarray(offset, offset + length)
    offset += length
  }
  const copy = Buffer.from(body)
  return { request: { method, target, headers, body: copy, text: copy.toString('utf8'), connection }, consumed: offset }
}

/**
 * The bytes of one HTTP/1.1 response: status line, the headers exactly as given (names and values
 * as written, in order; pairs allow repeats), then `body`. A `content-length` matching the body is
 * added unless the headers name one (or `transfer-encoding`) themselves, so a test can lie about it.
 */
export function response(
  status: number,
  headers: Readonly<Record<string, string>> | readonly (readonly [string, string])[],
  body: string | Buffer = '',
  reason = 'Hostile',
): Buffer {
  const pairs: (readonly [string, string])[] = Array.isArray(headers)
    ? [...(headers as readonly (readonly [string, string])[])]
    : Object.entries(headers as Record<string, string>)
  const bytes = typeof body === 'string' ? Buffer.from(body) : body
  const framed = pairs.some(([name]) => /^(content-length|transfer-encoding)$/i.test(name))
  if (!framed) pairs.push(['content-length', String(bytes.length)])
  const head = `HTTP/1.1 ${status} ${reason}\r\n${pairs.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`
  // latin1: header bytes exactly as the test wrote them (a test builds non-ASCII bytes itself).
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes])
}

/** A JSON response: `value` serialised (or a string sent as the body as is), `content-type: application/json`. */
export function json(status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): Buffer {
  const body = typeof value === 'string' ? value : JSON.stringify(value)
  return response(status, { 'content-type': 'application/json', ...headers }, body)
}

/** The request target's path and query, parsed. */
export function targetOf(request: Pick<RawRequest, 'target'>): { pathname: string; query: URLSearchParams } {
  const url = new URL(request.target, 'http://placeholder.invalid')
  return { pathname: url.pathname, query: url.searchParams }
}

/** What {@link guardProcess} saw. */
export interface ProcessGuard {
  /** Unhandled rejections and uncaught exceptions since the guard started. */
  readonly problems: unknown[]
  /** Own properties `Object.prototype` and `Array.prototype` gained since the guard started. */
  pollution(): string[]
  /** Stops listening. */
  stop(): void
}

/**
 * One hostile server for the test file that calls it: started before its tests (`started` receives
 * it), its requests and responder cleared before each test, closed after the file.
 */
export function useHostileServer(started: (server: HostileServer) => void): void {
  useServer(() => startHostileServer(), started)
}

/**
 * A {@link guardProcess} around each test of the file that calls it (at its top level, before its
 * own hooks): after the test, and after the file's own `afterEach` (which closes its clients and
 * servers), the guard must have seen no uncaught exception, no unhandled rejection and no
 * prototype pollution.
 */
export function useProcessGuard(): void {
  let guard: ProcessGuard | undefined
  beforeEach(() => {
    guard = guardProcess()
  })
  afterEach(() => {
    const ended = guard
    guard = undefined
    if (ended === undefined) return
    ended.stop()
    expect(ended.problems).toEqual([])
    expect(ended.pollution()).toEqual([])
  })
}

/**
 * Records unhandled rejections and uncaught exceptions from now on, and remembers the own
 * properties of `Object.prototype` and `Array.prototype`, so a test can assert that a hostile
 * response left no stray failure behind and polluted no prototype.
 */
export function guardProcess(): ProcessGuard {
  const problems: unknown[] = []
  const record = (reason: unknown): void => {
    problems.push(reason)
  }
  const before = new Map([Object.prototype, Array.prototype].map((proto) => [proto, new Set(Reflect.ownKeys(proto))]))
  process.on('unhandledRejection', record)
  process.on('uncaughtException', record)
  return {
    problems,
    pollution: () =>
      [...before].flatMap(([proto, keys]) =>
        Reflect.ownKeys(proto)
          .filter((key) => !keys.has(key))
          .map((key) => String(key)),
      ),
    stop: () => {
      process.off('unhandledRejection', record)
      process.off('uncaughtException', record)
    },
  }
}
