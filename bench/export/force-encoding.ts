// A dispatcher that asks for exactly one content encoding, whatever its caller put in
// accept-encoding: how the export benchmark makes the SDK (which owns that header; see its
// `compression` option) fetch gzip-only or br-only responses. It goes in through the SDK's public
// `dispatcher` option; the SDK still decodes the responses itself.
import type { Agent, Dispatcher } from 'undici'

type Headers = Dispatcher.DispatchOptions['headers']

/** `agent` with every request's accept-encoding replaced by `encoding`. */
export function forceAcceptEncoding(agent: Agent, encoding: string): Dispatcher {
  return agent.compose((dispatch) => (options, handler) => dispatch({ ...options, headers: replace(options.headers, encoding) }, handler))
}

function replace(headers: Headers | undefined, encoding: string): NonNullable<Headers> {
  const pairs: [string, string | string[]][] = []
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([headers[i]!, headers[i + 1]!])
  } else if (headers !== null && headers !== undefined) {
    const entries = (
      Symbol.iterator in headers ? headers : Object.entries(headers as Record<string, string | string[] | undefined>)
    ) as Iterable<[string, string | string[] | number | undefined]>
    for (const [name, value] of entries) if (value !== undefined) pairs.push([name, typeof value === 'number' ? String(value) : value])
  }
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of pairs) if (name.toLowerCase() !== 'accept-encoding') out[name] = value
  out['accept-encoding'] = encoding
  return out
}
