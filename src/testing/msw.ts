/**
 * `chat-service-sdk/testing/msw`: msw mode of the fake service. msw 3 request handlers serving a
 * fake's state ({@link createFakeHandlers}), and {@link createMswNetwork}, which turns on msw's
 * socket-level interception so that undici traffic (which `setupServer()` does not see) reaches
 * them. This entry imports `msw` and `@mswjs/interceptors` (optional peers of the package); the
 * main `chat-service-sdk/testing` entry does not, so it works, and type-checks, without msw.
 *
 * Limitation: a fetch `Request` cannot carry a body on GET/HEAD, so the handlers see an EMPTY
 * body on GET (the `content-length` header still shows the real length). See
 * {@link createFakeHandlers} for what the fake does then.
 *
 * @packageDocumentation
 */
import {} from '../engine-check.ts' // first: refuses an unsupported Node.js before msw loads (see engine-check.ts)
import { HttpRequestInterceptor } from '@mswjs/interceptors/http'
import { http, HttpResponse, type RequestHandler, type UnhandledFrameHandle } from 'msw'
import { defineNetwork, InterceptorSource, type NetworkApi } from 'msw/experimental'
import type { ResponsePlan } from './engine.ts'
import { engineOf } from './engine-key.ts'
import type { FakeChatService } from './fake-service.ts'

/** Options of {@link createFakeHandlers}. */
export interface FakeHandlersOptions {
  /**
   * Company that GET requests are attributed to. msw cannot show a GET body,
   * so the fake cannot read `keyId`/`keySecret` there: it accepts a GET that
   * has `content-type: application/json` and a non-zero `content-length`
   * (else 401) and treats it as coming from this company. Default: the first
   * company seeded.
   */
  companyForGet?: string
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
 * msw mode limits (a fetch `Request` cannot carry a GET body, so handlers see an empty body on
 * GET while `content-length` still shows one):
 * - GET credentials cannot be checked: a GET needs `content-type: application/json` and a
 *   non-zero `content-length` (else 401) and is attributed to `options.companyForGet`
 *   (default: the first company);
 * - customer-user filters cannot be seen: the unfiltered list is returned with the response
 *   header `x-fake-service-warning`;
 * - the recorded request has `body: undefined, bodyVisible: false`;
 * - `path` is the WHATWG-normalised pathname (dot segments resolved).
 * POST and PUT bodies are fully visible. All fault kinds work: drops become
 * `HttpResponse.error()` (before headers) or an errored body stream (mid-body).
 *
 * @param fake - a fake made by `createFakeChatService()` (from `chat-service-sdk/testing`).
 * @param baseUrl - where the client sends its requests, e.g. `https://chat.test`.
 * @throws TypeError when `fake` was not made by `createFakeChatService()`.
 */
export function createFakeHandlers(fake: FakeChatService, baseUrl: string, options: FakeHandlersOptions = {}): RequestHandler[] {
  const engine = engineOf(fake)
  const { origin, prefix } = parseBase(baseUrl)
  const handler = http.all(
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
          pathname: url.pathname,
          servicePathname: url.pathname.slice(prefix.length) || '/',
          search: url.search,
          headers,
          rawBody: text === '' ? undefined : text,
          bodyVisible,
        },
        { companyForInvisibleBody: options.companyForGet },
      )
      return toResponse(plan)
    },
  )
  return [handler]
}

async function toResponse(plan: ResponsePlan): Promise<Response> {
  await sleep(plan.delayMs)
  const response = plan.response
  if (response === null) return HttpResponse.error()
  const headers = { ...response.headers, 'content-length': String(response.body.length) }
  const init = { status: response.status, headers }
  if (response.body.length === 0) return new HttpResponse(null, init)
  if (!plan.dropMidBody && plan.bodyDelayMs <= 0) return new HttpResponse(new Uint8Array(response.body), init)
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
  return new HttpResponse(stream, init)
}

/** Options of {@link createMswNetwork}. */
export interface MswNetworkOptions {
  /**
   * What msw does with a request no handler matches (msw's own option).
   * Default `'error'`: the request fails with a network error, so no test
   * silently reaches a real host.
   */
  onUnhandledFrame?: UnhandledFrameHandle
  /** Suppress msw's per-request console log. Default `true`. */
  quiet?: boolean
}

/** The msw 3 network returned by {@link createMswNetwork}. */
export type MswNetwork = NetworkApi<[InterceptorSource]>

/**
 * Creates (does not enable) an msw 3 network that intercepts Node's HTTP
 * traffic at the socket level (`InterceptorSource` + `HttpRequestInterceptor`),
 * which includes undici: `defineNetwork` from `msw/experimental`. Call
 * `enable()` before the requests and `disable()` after (e.g. in
 * `beforeAll`/`afterAll`). While enabled, requests to real servers (such as
 * `fake.listen()`) are intercepted too and, with the default
 * `onUnhandledFrame: 'error'`, fail.
 *
 * @param handlers - e.g. `createFakeHandlers(fake, 'https://chat.test')`, or your own msw handlers.
 */
export function createMswNetwork(handlers: RequestHandler[], options: MswNetworkOptions = {}): MswNetwork {
  return defineNetwork({
    sources: [new InterceptorSource({ interceptors: [new HttpRequestInterceptor()] })],
    handlers,
    onUnhandledFrame: options.onUnhandledFrame ?? 'error',
    context: { quiet: options.quiet ?? true },
  })
}
