/**
 * A plain `node:http` server on 127.0.0.1 (port 0) that records every raw request (method, request
 * target exactly as sent, headers, raw body), for what msw cannot show: GET bodies and raw paths.
 * Do not enable msw in a file that uses it (msw would intercept these requests too).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface WireRequest {
  readonly method: string
  /** The request target exactly as it arrived, e.g. `/rest/v1/agents?page=1`. */
  readonly target: string
  readonly headers: IncomingHttpHeaders
  /** Raw body text ('' when none). */
  readonly body: string
}

/** What to answer: a status, headers and a body (objects are sent as JSON), or destroy the socket. */
export type WireReply = { status?: number; headers?: Record<string, string>; body?: unknown } | 'destroy'

export type WireResponder = (request: WireRequest) => WireReply

export interface WireServer {
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string
  /** Every request received, in order. */
  readonly requests: WireRequest[]
  /** Replaces the responder. */
  respond(responder: WireResponder): void
  close(): Promise<void>
}

export async function startWireServer(
  responder: WireResponder = () => ({ status: 404, body: { error: 'no responder' } }),
): Promise<WireServer> {
  const requests: WireRequest[] = []
  let current = responder
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const recorded: WireRequest = {
        method: req.method ?? '',
        target: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      requests.push(recorded)
      const reply = current(recorded)
      if (reply === 'destroy') {
        req.socket.destroy()
        return
      }
      const body = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)
      const headers: Record<string, string> = {
        ...(typeof reply.body === 'string' || reply.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...reply.headers,
      }
      res.writeHead(reply.status ?? 200, headers)
      res.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    respond: (next) => {
      current = next
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => {
          if (error) reject(error)
          else resolve()
        })
      }),
  }
}

/** The path and the query of a request target, parsed. */
export function splitTarget(target: string): { pathname: string; query: URLSearchParams } {
  const url = new URL(target, 'http://placeholder.invalid')
  return { pathname: url.pathname, query: url.searchParams }
}
