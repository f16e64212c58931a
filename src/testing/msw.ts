/**
 * `chat-service-sdk/testing/msw`: msw mode of the fake service. msw 3 request handlers serving a
 * fake's state ({@link createFakeHandlers}), and {@link createMswNetwork}, which turns on msw's
 * socket-level interception so that undici traffic (which `setupServer()` does not see) reaches
 * them. This entry needs `msw` and `@mswjs/interceptors`, optional peers of the package
 * (`npm install -D msw @mswjs/interceptors`): without them, importing it throws an error that
 * names them. `chat-service-sdk/testing` works, and type-checks, without them.
 *
 * msw mode cannot see GET bodies, and refuses (501) what it cannot answer faithfully: see
 * TESTING.md, "What msw mode cannot see".
 *
 * @packageDocumentation
 */
import {} from '../engine-check.ts' // first: refuses an unsupported Node.js before msw loads (see engine-check.ts)
import type { AnyHandler, RequestHandler, UnhandledFrameHandle } from 'msw'
import type { InterceptorSource, NetworkApi } from 'msw/experimental'
import type { ResponsePlan } from './engine.ts'
import { engineOf } from './engine-key.ts'
import type { FakeChatService } from './fake-service.ts'
import { loadMswPeers } from './msw-peers.ts'
import { isFakeServerUrl } from './server-registry.ts'

const { msw, experimental, interceptors } = loadMswPeers()

// The kit's types (types only: its functions and values stay in chat-service-sdk/testing), so that
// this entry's own types (createFakeHandlers takes a FakeChatService) stand alone: the same
// declarations chat-service-sdk/testing exports.
export type { FakeChatService } from './fake-service.ts'
export type * from './types.ts'

/** Options of {@link createFakeHandlers}. */
export interface FakeHandlersOptions {
  /**
   * Company that GET requests are served as. msw cannot show a GET body, so the fake cannot read
   * `keyId`/`keySecret` there; it serves a GET only when its `content-length` is that of
   * `JSON.stringify({ keyId, keySecret })` for a key of this company, and answers 501 otherwise.
   * Default: the one company with a key of that length (501 when several companies have one:
   * then name the company here).
   */
  companyForGet?: string | undefined
}

/** Splits a base URL into origin and path prefix (a trailing `/rest/v1` is dropped). */
function parseBase(baseUrl: string): { origin: string; prefix: string } {
  const base = new URL(baseUrl)
  let prefix = base.pathname.replace(/\/+$/, '')
  if (prefix.endsWith('/rest/v1')) prefix = prefix.slice(0, -'/rest/v1'.length)
  return { origin: base.origin, prefix }
}

/** msw mode waits at least this long (ms) between the first body chunk and a mid-body drop. */
const MIN_DROP_WAIT_MS = 20

const sleep = (ms: number): Promise<void> => (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve())

/**
 * msw 3 handlers serving the state of `fake` for every request under `baseUrl` (an origin,
 * optionally with a path prefix; a trailing `/rest/v1` is ignored). Pass them to
 * {@link createMswNetwork} (msw's `setupServer()` does not see undici traffic).
 *
 * msw mode cannot see GET bodies: a GET is served only when its `content-length` shows a body of
 * credentials alone, and gets 501 `{ error: { status, message } }` (plus the
 * `x-fake-service-warning` header) when it may carry more, such as customer-user filters. POST
 * and PUT bodies are fully visible. Every limit, and what to do about it, is in TESTING.md,
 * "What msw mode cannot see".
 *
 * @param fake - a fake made by `createFakeChatService()` (from `chat-service-sdk/testing`).
 * @param baseUrl - where the client sends its requests, e.g. `https://chat.test`.
 * @throws TypeError when `fake` was not made by `createFakeChatService()`.
 */
export function createFakeHandlers(fake: FakeChatService, baseUrl: string, options: FakeHandlersOptions = {}): RequestHandler[] {
  const engine = engineOf(fake)
  const { origin, prefix } = parseBase(baseUrl)
  const handler = msw.http.all(
    ({ request }) => {
      const url = new URL(request.url)
      return url.origin === origin && (prefix === '' || url.pathname === prefix || url.pathname.startsWith(`${prefix}/`))
    },
    async ({ request }) => {
      const url = new URL(request.url)
      const method = request.method.toUpperCase()
      const bodyVisible = method !== 'GET' && method !== 'HEAD'
      const text = bodyVisible ? await request.text() : undefined
      const headers: Record<string, string> = {}
      request.headers.forEach((value, name) => {
        headers[name] = value
      })
      const plan = engine.process(
        {
          method,
          path: url.pathname,
          servicePath: url.pathname.slice(prefix.length) || '/',
          search: url.search,
          headers,
          rawBody: text === '' ? undefined : text,
          bodyVisible,
        },
        { companyForGet: options.companyForGet },
      )
      return toResponse(plan)
    },
  )
  return [handler]
}

async function toResponse(plan: ResponsePlan): Promise<Response> {
  await sleep(plan.delayMs)
  const response = plan.response
  if (response === null) return msw.HttpResponse.error()
  const headers = { ...response.headers, 'content-length': String(response.body.length) }
  const init = { status: response.status, headers }
  if (response.body.length === 0) return new msw.HttpResponse(null, init)
  if (!plan.dropMidBody && plan.bodyDelayMs <= 0) return new msw.HttpResponse(new Uint8Array(response.body), init)
  const body = response.body
  const first = body.subarray(0, Math.max(1, Math.floor(body.length / 2)))
  const rest = body.subarray(first.length)
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(new Uint8Array(first))
      // Before a drop, give the client a moment to parse the headers and the
      // first chunk (the interceptor would otherwise destroy the socket first).
      await sleep(plan.dropMidBody ? Math.max(plan.bodyDelayMs, MIN_DROP_WAIT_MS) : plan.bodyDelayMs)
      if (plan.dropMidBody) {
        controller.error(new Error('chat-service-sdk/testing: injected mid-body connection drop'))
        return
      }
      if (rest.length > 0) controller.enqueue(new Uint8Array(rest))
      controller.close()
    },
  })
  return new msw.HttpResponse(stream, init)
}

/** Options of {@link createMswNetwork}. */
export interface MswNetworkOptions {
  /**
   * What msw does with a request no handler matches (msw's own option).
   * Default `'error'`: the request fails with a network error, so no test
   * silently reaches a real host.
   */
  onUnhandledFrame?: UnhandledFrameHandle | undefined
  /** Suppress msw's per-request console log. Default `true`. */
  quiet?: boolean | undefined
}

/** The msw 3 network returned by {@link createMswNetwork}. */
export type MswNetwork = NetworkApi<[InterceptorSource]>

/** Lets requests to the fake's own listening servers (`fake.listen()`) reach them. */
const fakeServerPassthrough = msw.http.all(
  ({ request }) => isFakeServerUrl(new URL(request.url)),
  () => msw.passthrough(),
)

/**
 * The network's handlers, with {@link fakeServerPassthrough} always last: after the user's
 * handlers (which may still answer a request to a fake server), and kept through `use()`,
 * `resetHandlers(...)` and `restoreHandlers()`, which only see the user's handlers.
 */
class KitHandlersController extends experimental.InMemoryHandlersController {
  override getHandlersByKind<Kind extends AnyHandler['kind']>(kind: Kind): Extract<AnyHandler, { kind: Kind }>[] {
    const handlers = super.getHandlersByKind(kind)
    if (kind !== 'request') return handlers
    const withPassthrough: AnyHandler[] = [...handlers, fakeServerPassthrough]
    return withPassthrough as typeof handlers
  }
}

/**
 * Creates (does not enable) an msw 3 network that intercepts Node's HTTP traffic at the socket
 * level (`InterceptorSource` + `HttpRequestInterceptor`), which includes undici: `defineNetwork`
 * from `msw/experimental`. Call `enable()` before the requests and `disable()` after (e.g. in
 * `beforeAll`/`afterAll`).
 *
 * Requests to the fake's own listening servers (`fake.listen()`, in this process) that no handler
 * answers go through to them, so msw mode and listen mode work in the same test file. Any other
 * request that no handler matches follows `onUnhandledFrame` (default `'error'`: it fails).
 *
 * @param handlers - e.g. `createFakeHandlers(fake, 'https://chat.test')`, or your own msw handlers.
 */
export function createMswNetwork(handlers: RequestHandler[], options: MswNetworkOptions = {}): MswNetwork {
  return experimental.defineNetwork({
    sources: [new experimental.InterceptorSource({ interceptors: [new interceptors.HttpRequestInterceptor()] })],
    handlers: new KitHandlersController(handlers),
    onUnhandledFrame: options.onUnhandledFrame ?? 'error',
    context: { quiet: options.quiet ?? true },
  })
}
