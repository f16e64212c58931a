// A small HTTP/1.1 proxy in front of a benchmark server: it forwards every request unchanged (but
// for `host`), answers with the server's status, headers and body (hop-by-hop headers are its own),
// and can record what arrived. Used to see what a contender puts on the wire (bench/wire-check.ts)
// and to hold connections open for a client slowed down by valgrind (bench/instructions.ts): the
// fake closes a connection idle for 5 s, and a client running 50 times slower can reuse it at the
// moment it closes ("other side closed"), which a fast client never meets.
import http from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'

/** A request as it arrived at the proxy. */
export interface ArrivedRequest {
  method: string
  url: string
  /** Header lines as sent, names lower-cased, in order; `host` left out (it names the proxy). */
  headers: string[]
  body: Buffer
}

export interface Proxy {
  /** The proxy's origin, `http://127.0.0.1:PORT`. */
  readonly url: string
  /** Connections clients opened to the proxy. */
  readonly connections: number
  close(): Promise<void>
}

export interface ProxyOptions {
  /** How long a client's idle connection is kept, ms (Node's default: 5 s). */
  keepAliveTimeoutMs?: number
  /** Called with each request, and the `content-encoding` of its answer ('' when none). */
  onExchange?: (request: ArrivedRequest, answerEncoding: string) => void
}

export async function startProxy(target: string, options: ProxyOptions = {}): Promise<Proxy> {
  const upstream = new URL(target)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  let connections = 0
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const headers: string[] = []
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!.toLowerCase()
        if (name !== 'host') headers.push(`${name}: ${req.rawHeaders[i + 1]}`)
      }
      const forward = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
          agent,
        },
        (answer) => {
          const encoding = answer.headers['content-encoding']
          options.onExchange?.({ method: req.method ?? '', url: req.url ?? '', headers, body }, encoding ?? '')
          const { connection: _connection, 'keep-alive': _keepAlive, ...passed } = answer.headers
          // The whole answer in one write, as the fake sends it: a client must not see it arrive in
          // one read this time and in two the next (a counted client would count the difference).
          const parts: Buffer[] = []
          answer.on('data', (chunk: Buffer) => parts.push(chunk))
          answer.on('end', () => {
            res.writeHead(answer.statusCode ?? 502, passed)
            res.end(Buffer.concat(parts))
          })
        },
      )
      forward.on('error', () => res.destroy())
      forward.end(body)
    })
  })
  proxy.on('connection', () => connections++)
  if (options.keepAliveTimeoutMs !== undefined) proxy.keepAliveTimeout = options.keepAliveTimeoutMs
  proxy.listen(0, '127.0.0.1')
  await once(proxy, 'listening')
  const { port } = proxy.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections
    },
    close: async () => {
      proxy.closeAllConnections()
      const closed = once(proxy, 'close')
      proxy.close()
      await closed
      agent.destroy()
    },
  }
}
