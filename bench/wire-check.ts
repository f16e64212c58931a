// Start-up check that the floor is fair: the floor and the SDK must put the same request on the wire
// (method, path, every header name and value, body bytes), get the same kind of response (no
// content-coding to decode), and keep their connections for many calls. A recording proxy between them
// and the fake sees exactly what each sends; a difference stops the benchmark.
import { contenderNamed, type PageTarget } from './contenders.ts'
import type { ServerInfo } from './fake.ts'
import { startProxy } from './proxy.ts'

interface Seen {
  method: string
  url: string
  /** Header lines as sent, names lower-cased; `host` left out (the proxy's port). */
  headers: string[]
  body: string
  /** The `content-encoding` of the fake's answers ('' when none). */
  encoding: string
  /** Connections the proxy accepted. */
  connections: number
}

/** Runs one contender through a recording proxy for `calls` calls and returns what its first request was. */
async function record(spec: string, server: ServerInfo, page: PageTarget, calls: number): Promise<Seen> {
  let seen: Omit<Seen, 'connections'> | undefined
  const proxy = await startProxy(server.url, {
    onExchange: (request, encoding) => {
      seen ??= { method: request.method, url: request.url, headers: request.headers, body: request.body.toString('utf8'), encoding }
      if (encoding !== '' && seen.encoding === '') seen.encoding = encoding
    },
  })
  const contender = await contenderNamed(spec, { ...server, url: proxy.url }, page)
  try {
    for (let i = 0; i < calls; i++) {
      const items = await contender.call()
      if (items !== page.items) throw new Error(`${spec} through the proxy: expected ${page.items} items, got ${items}`)
    }
  } finally {
    await contender.close()
    await proxy.close()
  }
  return { ...seen!, connections: proxy.connections }
}

/**
 * Checks that the floor (`floor`) sends what the SDK (`sdk`) sends for `page`, byte for byte but
 * for the header order, and that both open the same connections (at most 2) over 20 calls. Resolves with a note for
 * the report; throws on any difference.
 */
export async function verifyFloorWire(server: ServerInfo, page: PageTarget): Promise<string> {
  const floor = await record('floor', server, page, 20)
  const mine = await record('sdk', server, page, 20)
  const problems: string[] = []
  if (floor.method !== mine.method || floor.url !== mine.url)
    problems.push(`request line: ${floor.method} ${floor.url} vs ${mine.method} ${mine.url}`)
  const a = [...floor.headers].sort()
  const b = [...mine.headers].sort()
  if (a.join('\n') !== b.join('\n')) problems.push(`headers: floor [${a.join('; ')}] vs SDK [${b.join('; ')}]`)
  if (floor.body !== mine.body) problems.push(`body: floor ${floor.body.length} bytes vs SDK ${mine.body.length} bytes`)
  if (floor.encoding !== '' || mine.encoding !== '')
    problems.push(`content-encoding of the answers: '${floor.encoding}' / '${mine.encoding}'`)
  // undici may open a second socket when a call is dispatched before the last one's socket is
  // marked free again; what matters is that both behave alike and neither reconnects per call.
  if (floor.connections !== mine.connections || mine.connections > 2) {
    problems.push(`connections over 20 sequential calls: floor ${floor.connections}, SDK ${mine.connections}`)
  }
  if (problems.length > 0) throw new Error(`the floor does not send what the SDK sends, so it is not a fair floor: ${problems.join('; ')}`)
  return `the floor sends what the SDK sends (checked at a recording proxy): ${mine.method} ${mine.url}, the same ${b.length} headers (${b.map((h) => h.split(':')[0]).join(', ')}), the same ${mine.body.length}-byte body, ${mine.connections} connection(s) each for 20 sequential calls, answers not content-coded`
}
