// The lean export server: node:http serving the export dataset's two list endpoints with a fixed
// latency, compressing each response per the request's accept-encoding (node:zlib), and checking
// keyId/keySecret in the JSON body of every GET like the service. Pages at limit 100 (every page an
// export reads) are rendered and compressed once at start-up, so the server spends almost no CPU
// per request: on this 2-core machine it shares the cores with the client, and a real service runs
// elsewhere. GET /__bench/stats and POST /__bench/reset expose its counters (and the link's);
// POST /__bench/night/1 and /__bench/night/2 switch the data it serves (night 2: the dataset after
// `grow()`, when the server was given it; its changed pages are pre-rendered too).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import zlib from 'node:zlib'
import type { ExportDataset, GrownNight, NightView } from './dataset.ts'

export const ENCODINGS = ['identity', 'gzip', 'br', 'zstd'] as const
export type Encoding = (typeof ENCODINGS)[number]
/** Which encoding the server picks when a request accepts several: br, then zstd, then gzip (as CDNs commonly prefer). */
const PREFERENCE: readonly Encoding[] = ['br', 'zstd', 'gzip']

/** Compression settings of an on-the-fly server: zlib's default gzip level 6; brotli quality 5 (quality 11, zlib's default, is ~100× slower); zstd level 3. */
export function compress(body: Buffer, encoding: Encoding): Buffer {
  switch (encoding) {
    case 'identity':
      return body
    case 'gzip':
      return zlib.gzipSync(body, { level: 6 })
    case 'br':
      return zlib.brotliCompressSync(body, {
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      })
    case 'zstd':
      return zlib.zstdCompressSync(body, { params: { [zlib.constants.ZSTD_c_compressionLevel]: 3 } })
  }
}

/** The encoding to answer with, per RFC 9110 §12.5.3 (q-values; q=0 refuses; `*` matches the rest). */
export function chooseEncoding(header: string | undefined): Encoding {
  if (header === undefined || header.trim() === '') return 'identity'
  const q = new Map<string, number>()
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';').map((s) => s.trim())
    const qParam = params.find((p) => p.startsWith('q='))
    q.set(name.toLowerCase(), qParam === undefined ? 1 : Number(qParam.slice(2)))
  }
  for (const encoding of PREFERENCE) {
    const weight = q.get(encoding) ?? q.get('*')
    if (weight !== undefined && weight > 0) return encoding
  }
  return 'identity'
}

export interface ServerStats {
  requests: number
  /** Responses that were not 200 (a contender sent something wrong). */
  errors: number
  byEncoding: Record<string, { responses: number; bodyBytes: number }>
  /** Mean ms from the request's last byte to the response's write: the configured latency plus timer overshoot. */
  meanDelayMs: number
  /**
   * Most requests the server held at once (received, not yet answered) since the last reset: what
   * a contender's concurrency really was, to check that two contenders compared at "the same
   * concurrency" kept the same number of requests in flight.
   */
  maxInFlight: number
}

export interface ExportServer {
  url: string
  stats(): ServerStats
  reset(): void
  close(): Promise<void>
}

export interface ExportServerOptions {
  latencyMs: number
  /** Extra counters to merge into GET /__bench/stats (the link proxy's). */
  extraStats?: () => object
  extraReset?: () => void
  /** Night 2 of the nightly benchmark, served after POST /__bench/night/2. */
  night2?: GrownNight | undefined
}

export async function startExportServer(data: ExportDataset, options: ExportServerOptions): Promise<ExportServer> {
  // Pre-rendered, pre-compressed pages: path → encoding → bytes.
  const prerender = (view: NightView, paths: readonly string[], into: Map<string, Map<Encoding, Buffer>>): void => {
    for (const path of paths) {
      const url = new URL(path, 'http://x')
      const rendered = view.render(url.pathname, url.searchParams)
      if (rendered.status !== 200) throw new Error(`export server: ${path} renders ${rendered.status}`)
      const body = Buffer.from(rendered.body)
      into.set(path, new Map(ENCODINGS.map((e) => [e, compress(body, e)])))
    }
  }
  const night1 = new Map<string, Map<Encoding, Buffer>>()
  prerender(data, data.pathsAtLimit100(), night1)
  const nights: { view: NightView; cache: Map<string, Map<Encoding, Buffer>> }[] = [{ view: data, cache: night1 }]
  if (options.night2 !== undefined) {
    // Night 2 shares night 1's pages but the ones that changed.
    const cache = new Map(night1)
    prerender(options.night2, options.night2.changedPaths(), cache)
    nights.push({ view: options.night2, cache })
  }
  let night = nights[0]!
  let stats = fresh()
  let delaySum = 0
  let inFlight = 0

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const target = req.url ?? '/'
      if (target.startsWith('/__bench/')) {
        if (req.method === 'POST' && target === '/__bench/reset') {
          stats = fresh()
          delaySum = 0
          options.extraReset?.()
        }
        const switched = /^\/__bench\/night\/(\d+)$/.exec(target)
        if (req.method === 'POST' && switched !== null) {
          const chosen = nights[Number(switched[1]) - 1]
          if (chosen === undefined) {
            res.writeHead(404, { 'content-type': 'text/plain' }).end(`no night ${switched[1]} (start the server with night 2)`)
            return
          }
          night = chosen
        }
        const snapshot = { ...stats, meanDelayMs: stats.requests > 0 ? delaySum / stats.requests : 0, ...options.extraStats?.() }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(snapshot))
        return
      }
      const ended = performance.now()
      stats.requests++
      stats.maxInFlight = Math.max(stats.maxInFlight, ++inFlight)
      const { status, body, encoding } = answer(req, Buffer.concat(chunks), target)
      const headers: http.OutgoingHttpHeaders = {
        'content-type': 'application/json; charset=utf-8',
        'content-length': body.length,
        vary: 'accept-encoding',
      }
      if (encoding !== 'identity') headers['content-encoding'] = encoding
      setTimeout(() => {
        inFlight--
        delaySum += performance.now() - ended
        if (status !== 200) stats.errors++
        const counter = (stats.byEncoding[encoding] ??= { responses: 0, bodyBytes: 0 })
        counter.responses++
        counter.bodyBytes += body.length
        res.writeHead(status, headers).end(body)
      }, options.latencyMs)
    })
  })

  function answer(req: http.IncomingMessage, raw: Buffer, target: string): { status: number; body: Buffer; encoding: Encoding } {
    const fail = (status: number, message: string): { status: number; body: Buffer; encoding: Encoding } => ({
      status,
      body: Buffer.from(JSON.stringify({ error: { status, message } })),
      encoding: 'identity',
    })
    if (req.method !== 'GET') return fail(405, 'Method not allowed')
    // Credentials live in the JSON body of every GET (spec, Authentication 1).
    let credentials: { keyId?: unknown; keySecret?: unknown } | undefined
    try {
      if ((req.headers['content-type'] ?? '').includes('application/json'))
        credentials = JSON.parse(raw.toString('utf8')) as typeof credentials
    } catch {
      return fail(400, 'Request body is not JSON')
    }
    if (credentials?.keyId !== data.keyId || credentials.keySecret !== data.keySecret) return fail(401, 'Invalid API credentials')
    const encoding = chooseEncoding(req.headers['accept-encoding'])
    const url = new URL(target, 'http://x')
    // Keyed like pathsAtLimit100(), whatever order the client writes its query in.
    const key = `${url.pathname}?page=${url.searchParams.get('page') ?? '1'}&limit=${url.searchParams.get('limit') ?? ''}`
    const cached = night.cache.get(key)?.get(encoding)
    if (cached !== undefined) return { status: 200, body: cached, encoding }
    const rendered = night.view.render(url.pathname, url.searchParams)
    if (rendered.status !== 200) return fail(rendered.status, rendered.body)
    return { status: 200, body: compress(Buffer.from(rendered.body), encoding), encoding }
  }

  // Idle pooled sockets stay open between benchmark runs (a reconnect would add noise).
  server.keepAliveTimeout = 120_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ ...stats, meanDelayMs: stats.requests > 0 ? delaySum / stats.requests : 0 }),
    reset: () => {
      stats = fresh()
      delaySum = 0
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => {
          resolve()
        })
        server.closeAllConnections()
      }),
  }
}

function fresh(): ServerStats {
  return { requests: 0, errors: 0, byEncoding: {}, meanDelayMs: 0, maxInFlight: 0 }
}
