// The fair floor of every comparison (issue 9): raw undici with the SAME settings as the SDK's own
// pool, so that the SDK is compared with the best a user can do on the same transport, not with
// a handicapped one. Keep this file in step with the Agent the SDK builds (src/internal/transport.ts).
import { Agent, interceptors, type Dispatcher } from 'undici'
import { VERSION } from 'chat-service-sdk'
// The SDK's defaults are internal since 0.4: read from its source, so that this floor follows them.
import { DEFAULT_CONNECTIONS, DEFAULT_TIMEOUT_MS } from '../src/core/options.ts'
import type { ServerInfo } from './fake.ts'

/**
 * An Agent like the SDK's default pool: `connections` 64 (DEFAULT_CONNECTIONS), no pipelining,
 * HTTP/1.1 only (`allowH2: false`), the SDK's connect timeout.
 */
export function floorAgent(): Agent {
  return new Agent({ connections: DEFAULT_CONNECTIONS, pipelining: 1, allowH2: false, connect: { timeout: DEFAULT_TIMEOUT_MS } })
}

/** The floor agent with undici's own decompress interceptor composed: decodes gzip, br, zstd, deflate. */
export function decompressingFloor(agent: Agent): Dispatcher {
  return agent.compose(interceptors.decompress())
}

/**
 * The headers the SDK sends on every request (same names, same values; bench/wire-check.ts checks
 * them at the wire). `accept-encoding` as the SDK's default client sends it: the per-call fake
 * answers uncompressed whatever it is asked (its `compression: false`), so neither side decodes
 * anything, and the check makes sure of that too.
 */
export const floorHeaders: Readonly<Record<string, string>> = {
  'user-agent': `chat-service-sdk/${VERSION} node/${process.versions.node}`,
  'content-type': 'application/json',
  accept: 'application/json',
  'accept-encoding': 'gzip, br',
}

/** {@link floorHeaders} without `accept-encoding`: what the export floor sends when it asks for identity. */
export const identityHeaders: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(floorHeaders).filter(([name]) => name !== 'accept-encoding'),
)

/**
 * The JSON body of every GET: the credentials (spec, Authentication 1). Built once per server: the
 * credentials do not change, and a floor that re-serialises them would flatter the SDK.
 */
export function credentialsBody(server: Pick<ServerInfo, 'keyId' | 'keySecret'>): string {
  return JSON.stringify({ keyId: server.keyId, keySecret: server.keySecret })
}

/**
 * One GET as a user would write it on the floor agent: JSON body, `reset: false` (without it undici
 * closes the connection after every GET that carries a body), the body read with `body.json()`.
 * Rejects on a status other than 200.
 */
export async function floorGet<T>(
  dispatcher: Dispatcher,
  origin: string,
  path: string,
  body: string,
  headers: Readonly<Record<string, string>> = floorHeaders,
): Promise<T> {
  const response = await dispatcher.request({ origin, path, method: 'GET', headers, body, reset: false })
  if (response.statusCode !== 200) throw new Error(`raw undici: HTTP ${response.statusCode} for ${path}: ${await response.body.text()}`)
  return (await response.body.json()) as T
}

/**
 * The strict floor: the same GET through undici's low-level `dispatch()` with a minimal handler
 * (collect the chunks, one `JSON.parse`), which skips the Readable stream `request()` builds for
 * the body. It is what an SDK built on a custom dispatch handler can reach at best, so it is shown
 * next to the floor as a labelled reference; the goals are against the floor (`floorGet`), which is
 * what a user writes.
 */
export function strictFloorGet<T>(
  dispatcher: Dispatcher,
  origin: string,
  path: string,
  body: string,
  headers: Readonly<Record<string, string>> = floorHeaders,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let status = 0
    dispatcher.dispatch(
      { origin, path, method: 'GET', headers, body, reset: false },
      {
        // undici requires the method even when there is nothing to do at the start.
        onRequestStart() {},
        onResponseStart(_controller, statusCode) {
          status = statusCode
        },
        onResponseData(_controller, chunk) {
          chunks.push(chunk)
        },
        onResponseEnd() {
          const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8')
          if (status === 200) resolve(JSON.parse(text) as T)
          else reject(new Error(`raw undici dispatch: HTTP ${status} for ${path}: ${text}`))
        },
        onResponseError(_controller, error) {
          reject(error)
        },
      },
    )
  })
}
