/**
 * The fake's own listening servers in this process, so that msw mode can let requests to them
 * through: a test file may use both modes, and an enabled msw network sees every request of the
 * process, including the ones to `fake.listen()`.
 *
 * The registry lives on `globalThis` under a registered symbol because the two entry points
 * (`chat-service-sdk/testing`, which starts servers, and `chat-service-sdk/testing/msw`, which
 * asks) are bundled separately, and may even be loaded once as ESM and once as CommonJS.
 *
 * @module
 */

const REGISTRY_KEY = Symbol.for('chat-service-sdk/testing:listening-servers')

/** `host:port` of each listening server, as in `URL.host` (e.g. `127.0.0.1:41234`, `[::1]:41234`). */
function registry(): Map<string, number> {
  const holder = globalThis as { [REGISTRY_KEY]?: Map<string, number> }
  let servers = holder[REGISTRY_KEY]
  if (servers === undefined) {
    servers = new Map()
    holder[REGISTRY_KEY] = servers
  }
  return servers
}

/** Registers a server by its origin (e.g. `http://127.0.0.1:41234`); returns the unregister function. */
export function registerServer(origin: string): () => void {
  const { host } = new URL(origin)
  const servers = registry()
  // A count, not a flag: a port closed by one fake may be reused by another before the first unregisters.
  servers.set(host, (servers.get(host) ?? 0) + 1)
  let registered = true
  return () => {
    if (!registered) return
    registered = false
    const count = (servers.get(host) ?? 1) - 1
    if (count > 0) servers.set(host, count)
    else servers.delete(host)
  }
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\]|\[::ffff:127(\.\d{1,3}){3}\])$/i
const ANY_ADDRESS = new Set(['0.0.0.0', '[::]'])

/**
 * Whether `url` goes to one of the fake's listening servers: same host and port, or a loopback
 * name for a server on loopback or on every address (`localhost:41234` for `127.0.0.1:41234`).
 */
export function isFakeServerUrl(url: URL): boolean {
  if (url.protocol !== 'http:') return false
  const servers = registry()
  if (servers.has(url.host)) return true
  if (!LOOPBACK.test(url.hostname) || url.port === '') return false
  for (const host of servers.keys()) {
    const { hostname, port } = new URL(`http://${host}`)
    if (port === url.port && (LOOPBACK.test(hostname) || ANY_ADDRESS.has(hostname))) return true
  }
  return false
}
