/**
 * Listen mode: a real `node:http` server on loopback serving the fake with
 * full fidelity. It reads the body of every request, GET included, and can
 * carry out every fault (slow headers, slow body, resets, mid-body drops).
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Engine, ResponsePlan } from './engine.ts'
import { encodeResponse, type CompressionPolicy } from './content-coding.ts'
import { isControlPath, type ControlHandler } from './control.ts'
import { errorResponse, newRequestId, REQUEST_ID_HEADER, type FakeRequest, type FakeResponse } from './http.ts'
import { registerServer } from './server-registry.ts'
import type { FakeClientOptions, FakeServerHandle } from './types.ts'

/** Request bodies above this many bytes get 413 (a guard, not a spec limit). */
export const MAX_BODY_BYTES = 16 * 1024 * 1024

/**
 * Starts a server for `engine` on `host:port` (defaults `127.0.0.1`, 0 = any free port), compressing
 * as `compression` says (default: the engine's policy); `control` answers the control endpoints
 * (`/__fake/...`, see control.ts).
 */
export async function startHttpServer(
  engine: Engine,
  opts: { port?: number | undefined; host?: string | undefined; compression?: CompressionPolicy | undefined } = {},
  control?: ControlHandler,
): Promise<FakeServerHandle> {
  const compression = 'compression' in opts ? opts.compression : engine.options.compression
  const host = opts.host ?? '127.0.0.1'
  const timers = new Set<NodeJS.Timeout>()
  let closed = false

  const sleep = (ms: number): Promise<void> =>
    ms <= 0
      ? Promise.resolve()
      : new Promise((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer)
            resolve()
          }, ms)
          timers.add(timer)
        })

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    let size = 0
    let tooLarge = false
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) tooLarge = true
      else chunks.push(chunk)
    })
    req.on('error', () => {})
    req.on('end', () => {
      const accepted = req.headers['accept-encoding']
      const encode = (r: FakeResponse): FakeResponse => encodeResponse(r, accepted, compression)
      /** Answers at once, outside the engine (no latency, no fault, not recorded). */
      const send = (r: FakeResponse): void => {
        const out = encode({ ...r, headers: { [REQUEST_ID_HEADER]: newRequestId(), ...r.headers } })
        res.writeHead(out.status, { ...out.headers, 'content-length': String(out.body.length) })
        res.end(out.body)
      }
      if (tooLarge) {
        // The body was not kept, so there is nothing to process.
        send(errorResponse(413, `Request body larger than ${MAX_BODY_BYTES} bytes`))
        return
      }
      const { pathname, search } = splitTarget(req.url ?? '/')
      const request: FakeRequest = {
        method: (req.method ?? 'GET').toUpperCase(),
        path: pathname,
        servicePath: pathname,
        search,
        headers: headersOf(req),
        rawBody: size > 0 ? Buffer.concat(chunks).toString('utf8') : undefined,
        bodyVisible: true,
      }
      if (control !== undefined && isControlPath(pathname)) {
        send(control(request, req.socket.remoteAddress))
        return
      }
      const plan = engine.process(request)
      if (plan.response !== null) plan.response = encode(plan.response)
      void respond(req, res, plan, sleep).catch(() => res.destroy())
    })
  })
  // A test process should never hang on the fake: no long-lived idle sockets.
  server.keepAliveTimeout = 5_000

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('chat-service-sdk/testing: server has no TCP address')
  const hostPart = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address
  const url = `http://${hostPart}:${address.port}`
  const unregister = registerServer(url)

  const close = (): Promise<void> => {
    if (closed) return Promise.resolve()
    closed = true
    unregister()
    for (const timer of timers) clearTimeout(timer)
    timers.clear()
    return new Promise((resolve) => {
      server.close(() => {
        resolve()
      })
      server.closeAllConnections()
    })
  }
  const clientOptions = (): FakeClientOptions => {
    const company = engine.context.state.firstCompany()
    if (company === undefined) throw new Error('chat-service-sdk/testing: clientOptions() needs a company, and the fake has none: seed one')
    const key = company.keys[0]
    if (key === undefined) throw new Error(`chat-service-sdk/testing: clientOptions(): the first company, ${company.id}, has no API key`)
    return { baseUrl: url, keyId: key.keyId, keySecret: key.keySecret }
  }
  return { url, clientOptions, close, [Symbol.asyncDispose]: close }
}

async function respond(req: IncomingMessage, res: ServerResponse, plan: ResponsePlan, sleep: (ms: number) => Promise<void>): Promise<void> {
  const socket: Socket = req.socket
  // A function, not an inline test: the answer changes while we sleep (TS would keep its first narrowing).
  const gone = (): boolean => socket.destroyed || res.destroyed
  await sleep(plan.delayMs)
  if (gone()) return
  const response = plan.response
  if (response === null) {
    // "before-headers": reset the TCP connection (RST) before any byte.
    socket.resetAndDestroy()
    return
  }
  const body = response.body
  res.writeHead(response.status, { ...response.headers, 'content-length': String(body.length) })
  if (!plan.dropMidBody && plan.bodyDelayMs <= 0) {
    res.end(body)
    return
  }
  const half = Math.max(1, Math.floor(body.length / 2))
  const first = body.subarray(0, Math.min(half, body.length))
  const rest = body.subarray(first.length)
  if (plan.dropMidBody) {
    if (first.length === 0) res.flushHeaders()
    await new Promise<void>((resolve) => {
      if (first.length === 0) {
        resolve()
        return
      }
      res.write(first, () => {
        resolve()
      })
    })
    await sleep(plan.bodyDelayMs)
    socket.destroy()
    return
  }
  if (first.length > 0) res.write(first)
  else res.flushHeaders()
  await sleep(plan.bodyDelayMs)
  if (gone()) return
  res.end(rest)
}

function splitTarget(target: string): { pathname: string; search: string } {
  let t = target
  // absolute-form (proxy style): keep only path and query.
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/.exec(t)
  if (scheme) t = t.slice(scheme[0].length) || '/'
  const hash = t.indexOf('#')
  if (hash >= 0) t = t.slice(0, hash)
  const q = t.indexOf('?')
  return q >= 0 ? { pathname: t.slice(0, q), search: t.slice(q) } : { pathname: t, search: '' }
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    out[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}
