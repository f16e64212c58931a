/**
 * The HTTP side of the fake, the same for every endpoint: routing, body parsing and
 * authentication. It turns a {@link FakeRequest} into a {@link Call} for the endpoint's handler,
 * or answers itself when the request never gets that far.
 *
 * Checks run in this order: route (404, 405), body (400), credentials (401), then the handler's
 * own (400, 404). The spec fixes no order; TESTING.md lists the fake's choices.
 *
 * @module
 */
import { errorResponse, isJsonContentType, type FakeRequest, type FakeResponse } from './http.ts'
import { companyForInvisibleBody } from './invisible-body.ts'
import type { ListMoves } from './list-moves.ts'
import type { EndpointName, RateLimiter } from './rate-limit.ts'
import type { CompanyState, ServiceState } from './state.ts'
import type { TokenSigner } from './token.ts'
import type { FilterMatch } from './types.ts'

/** A JSON object body. */
export type Json = Record<string, unknown>

/** What the handlers need from the service. */
export interface ServiceContext {
  state: ServiceState
  filterMatch: FilterMatch
  now: () => Date
  tokens: TokenSigner
  /** The `rateLimit` option's buckets; `undefined`: no limit. */
  rateLimit: RateLimiter | undefined
  /** Lists that move while they are read (`moveList`): fired by the list handlers before they answer. */
  moves: ListMoves
}

/** What an endpoint's handler gets: an authenticated request, parsed. */
export interface Call {
  ctx: ServiceContext
  req: FakeRequest
  /** The company the credentials belong to. */
  company: CompanyState
  /** Path parameters, percent-decoded. */
  params: Record<string, string>
  query: URLSearchParams
  /**
   * The JSON body's members, credentials included. In msw mode a GET body is invisible, and is
   * served only when it holds nothing but credentials (see invisible-body.ts): then `{}`.
   */
  body: Json
}

/** One endpoint of the service. */
export interface Endpoint {
  /** The endpoint as the spec writes it (`'POST /rest/v1/auth/token'`): what a limit of `rateLimit.endpoints` names. */
  name: EndpointName
  /** Upper-case method. */
  method: string
  /** Path after `/rest/v1`, e.g. `/customer-users/:id` (`:name` is a parameter, one segment). */
  path: string
  handle: (call: Call) => FakeResponse
  /**
   * Members besides `keyId`/`keySecret` that a GET endpoint reads from its body; msw mode, which
   * cannot see GET bodies, names them when it refuses a GET whose body holds more than credentials.
   */
  bodyFields?: readonly string[]
}

/** Per-request options of the transport. */
export interface RouteOptions {
  /** msw mode: the company GET requests are attributed to (default: found by body length). */
  companyForGet?: string | undefined
}

type Parsed = { kind: 'absent'; reason: string } | { kind: 'invalid'; message: string } | { kind: 'object'; value: Json }

/** Routes requests to endpoints. */
export class Router {
  readonly #routes: readonly { segments: readonly string[]; endpoint: Endpoint }[]

  constructor(endpoints: readonly Endpoint[]) {
    this.#routes = endpoints.map((endpoint) => ({ segments: endpoint.path.split('/').slice(1), endpoint }))
  }

  /** Handles one request. Never throws for client input. */
  handle(ctx: ServiceContext, req: FakeRequest, options: RouteOptions = {}): FakeResponse {
    const matches = this.#match(req.servicePath)
    if (matches.length === 0) return errorResponse(404, `No route for ${req.method} ${req.servicePath}`)
    const found = matches.find((m) => m.endpoint.method === req.method)
    if (!found) {
      const allow = matches.map((m) => m.endpoint.method).join(', ')
      return errorResponse(405, `Method ${req.method} not allowed`, { allow })
    }
    const { endpoint, rawParams } = found
    const params: Record<string, string> = {}
    for (const [name, raw] of Object.entries(rawParams)) {
      try {
        params[name] = decodeURIComponent(raw)
      } catch {
        return errorResponse(400, `Malformed percent-encoding in path parameter ${name}`)
      }
    }

    let company: CompanyState | undefined
    let keyId: string
    let body: Json = {}
    if (!req.bodyVisible) {
      const attributed = companyForInvisibleBody(ctx.state, req, options.companyForGet, endpoint.bodyFields ?? [])
      if ('refused' in attributed) return attributed.refused
      company = attributed.company
      keyId = attributed.keyId
    } else {
      const parsed = parseBody(req)
      if (parsed.kind === 'invalid') return errorResponse(400, parsed.message)
      if (parsed.kind === 'absent') return errorResponse(401, `Missing API credentials (${parsed.reason})`)
      const { keyId: givenKeyId, keySecret } = parsed.value
      if (givenKeyId === undefined || keySecret === undefined) return errorResponse(401, 'Missing API credentials')
      company = ctx.state.authenticate(givenKeyId, keySecret)
      if (!company) return errorResponse(401, 'Invalid API credentials')
      keyId = givenKeyId as string // authenticate() found it, so it is a string
      body = parsed.value
    }
    // After the credentials: only a key pair that exists is charged (rate-limit.ts says why).
    const refusal = ctx.rateLimit?.take(keyId, endpoint.name)
    if (refusal !== undefined) {
      const { headers } = refusal
      const wait = headers['retry-after'] ?? headers['retry-after-ms']
      const after = wait === undefined ? '' : `: retry after ${wait} ${headers['retry-after'] === undefined ? 'ms' : 's'}`
      const whose = refusal.endpoint === undefined ? '' : ` on ${refusal.endpoint}`
      return errorResponse(429, `Rate limit exceeded for API key ${keyId}${whose}${after}`, headers)
    }
    return endpoint.handle({ ctx, req, company, params, query: new URLSearchParams(req.search), body })
  }

  /** Every endpoint whose path matches, with its raw (undecoded) parameters. */
  #match(servicePath: string): { endpoint: Endpoint; rawParams: Record<string, string> }[] {
    const segments = servicePath.split('/')
    // Only `/rest/v1/...` exactly: `/rest/v1/v1/...` and trailing slashes find no route.
    if (segments[0] !== '' || segments[1] !== 'rest' || segments[2] !== 'v1') return []
    const rest = segments.slice(3)
    const out: { endpoint: Endpoint; rawParams: Record<string, string> }[] = []
    for (const route of this.#routes) {
      if (route.segments.length !== rest.length) continue
      const rawParams: Record<string, string> = {}
      const ok = route.segments.every((want, i) => {
        const got = rest[i] as string
        if (!want.startsWith(':')) return want === got
        rawParams[want.slice(1)] = got
        return got !== ''
      })
      if (ok) out.push({ endpoint: route.endpoint, rawParams })
    }
    return out
  }
}

function parseBody(req: FakeRequest): Parsed {
  if (req.rawBody === undefined || req.rawBody === '') return { kind: 'absent', reason: 'no request body' }
  if (!isJsonContentType(req.headers['content-type'])) {
    return { kind: 'absent', reason: `body is not JSON: content-type ${req.headers['content-type'] ?? '(none)'}` }
  }
  let value: unknown
  try {
    value = JSON.parse(req.rawBody)
  } catch {
    return { kind: 'invalid', message: 'Malformed JSON body' }
  }
  if (!isPlainObject(value)) return { kind: 'invalid', message: 'The JSON body must be an object' }
  return { kind: 'object', value }
}

/** A JSON object (not an array, not a class instance). */
export function isPlainObject(value: unknown): value is Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === null
}
