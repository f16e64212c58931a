/**
 * msw mode: msw 3 request handlers serving the fake's state, and a helper
 * that turns on msw's socket-level interception so that undici traffic (which
 * `setupServer()` does not see) reaches them.
 *
 * msw is optional: nothing here loads it until `handlers()` or
 * `createMswNetwork()` is called. It is loaded with `createRequire` (Node
 * >= 22.12 can `require()` ES modules), so importing `chat-service-sdk/testing`
 * works without msw installed.
 *
 * Limitation: a fetch `Request` cannot carry a body on GET/HEAD, so the
 * handlers see an EMPTY body on GET (the `content-length` header still shows
 * the real length). See `FakeHandlersOptions` for what the fake does then.
 *
 * @module
 */
import { createRequire } from 'node:module'
import type { RequestHandler, UnhandledFrameHandle } from 'msw'
import type { InterceptorSource, NetworkApi } from 'msw/experimental'
import type { Engine, ResponsePlan } from './engine.ts'

type MswCore = typeof import('msw')
type MswExperimental = typeof import('msw/experimental')
type InterceptorsHttp = typeof import('@mswjs/interceptors/http')

interface MswModules {
  core: MswCore
  experimental: MswExperimental
  interceptorsHttp: InterceptorsHttp
}

let cached: MswModules | undefined

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND'
}

/** Loads msw lazily; throws a clear error when it is missing. */
function loadMsw(): MswModules {
  if (cached) return cached
  const require = createRequire(import.meta.url)
  let core: MswCore
  let experimental: MswExperimental
  try {
    core = require('msw') as MswCore
    experimental = require('msw/experimental') as MswExperimental
  } catch (error) {
    if (isNotFound(error)) {
      throw new Error(
        'chat-service-sdk/testing: msw mode needs the "msw" package (version 3). Install it as a dev dependency: npm install --save-dev msw@^3',
        { cause: error },
      )
    }
    if ((error as { code?: unknown } | null)?.code === 'ERR_REQUIRE_ESM') {
      throw new Error('chat-service-sdk/testing: msw mode needs Node >= 22.12 (to load the ESM-only msw package)', { cause: error })
    }
    throw error
  }
  // Prefer the @mswjs/interceptors copy that msw itself depends on.
  let interceptorsHttp: InterceptorsHttp
  try {
    interceptorsHttp = createRequire(require.resolve('msw'))('@mswjs/interceptors/http') as InterceptorsHttp
  } catch {
    try {
      interceptorsHttp = require('@mswjs/interceptors/http') as InterceptorsHttp
    } catch (error) {
      throw new Error('chat-service-sdk/testing: cannot load "@mswjs/interceptors/http" (installed with msw 3)', { cause: error })
    }
  }
  cached = { core, experimental, interceptorsHttp }
  return cached
}

/** Options of `FakeChatService.handlers`. */
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

/** msw handlers serving `engine` for every request under `baseUrl`. */
export function createMswHandlers(engine: Engine, baseUrl: string, options: FakeHandlersOptions = {}): RequestHandler[] {
  const { core } = loadMsw()
  const { origin, prefix } = parseBase(baseUrl)
  const handler = core.http.all(
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
      return toResponse(core, plan)
    },
  )
  return [handler]
}

async function toResponse(core: MswCore, plan: ResponsePlan): Promise<Response> {
  await sleep(plan.delayMs)
  const response = plan.response
  if (response === null) return core.HttpResponse.error()
  const headers = { ...response.headers, 'content-length': String(response.body.length) }
  const init = { status: response.status, headers }
  if (response.body.length === 0) return new core.HttpResponse(null, init)
  if (!plan.dropMidBody && plan.bodyDelayMs <= 0) return new core.HttpResponse(new Uint8Array(response.body), init)
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
  return new core.HttpResponse(stream, init)
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
 * @param handlers - e.g. `fake.handlers('http://chat.test')`.
 */
export function createMswNetwork(handlers: RequestHandler[], options: MswNetworkOptions = {}): MswNetwork {
  const { experimental, interceptorsHttp } = loadMsw()
  return experimental.defineNetwork({
    sources: [new experimental.InterceptorSource({ interceptors: [new interceptorsHttp.HttpRequestInterceptor()] })],
    handlers,
    onUnhandledFrame: options.onUnhandledFrame ?? 'error',
    context: { quiet: options.quiet ?? true },
  })
}
