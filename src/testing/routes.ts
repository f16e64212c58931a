/**
 * The fake's request handling, independent of transport (node:http or msw):
 * routing, body parsing, authentication, validation and the six endpoints of
 * the spec. Input is a transport-neutral request; output is status, headers
 * and a body string.
 *
 * Order of checks (the spec does not fix one; the fake's choice):
 * 1. route: unknown path → 404, known path with another method → 405 (+ `Allow`);
 *    a path id that is not valid percent-encoding → 400;
 * 2. body: malformed JSON, or JSON that is not an object → 400 (a body is only
 *    read as JSON when `content-type` is `application/json` or `*+json`;
 *    otherwise it counts as absent);
 * 3. credentials (`keyId`/`keySecret` members of the body) missing or invalid → 401;
 * 4. query parameters and body fields → 400;
 * 5. referenced records (conversation, customer user, agent) → 404.
 *
 * @module
 */
import { messageCount, type CompanyState, type ServiceState } from './state.ts'
import { DEFAULT_TOKEN_LIFETIME_S, parseExpiresIn, type TokenSigner } from './token.ts'
import type { FilterMatch, StoredCustomerUser, UpdatedCustomerUserRecord } from './types.ts'

/** A request as the transports hand it to the fake. */
export interface CoreRequest {
  /** Upper-case method. */
  method: string
  /** Pathname relative to the service root, not decoded (starts with `/rest/v1` when well formed). */
  pathname: string
  /** `''` or `?…`. */
  search: string
  /** Lower-case header names. */
  headers: Record<string, string>
  /** Body text; `undefined` when there is none or it is invisible. */
  rawBody: string | undefined
  /** `false` when the transport cannot see the body (msw mode, GET/HEAD). */
  bodyVisible: boolean
}

/** A response before it is written. */
export interface CoreResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** What the handlers need from the service. */
export interface RouteContext {
  state: ServiceState
  filterMatch: FilterMatch
  now: () => Date
  tokens: TokenSigner
  /** msw mode: company that body-less GET requests are attributed to (default: the first company). */
  companyForInvisibleBody?: string | undefined
}

/** `content-type` of every response the fake builds. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** Response header set when msw mode could not see customer-user filters. */
export const WARNING_HEADER = 'x-fake-service-warning'

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  500: 'Internal Server Error',
}

/** A JSON response with the fake's content type. */
export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): CoreResponse {
  return { status, headers: { 'content-type': JSON_CONTENT_TYPE, ...headers }, body: JSON.stringify(value) }
}

/**
 * The fake's error response: `{ "error": { "status": <n>, "message": "..." } }`
 * (the spec shows no error body; this shape is the fake's choice).
 */
export function errorResponse(status: number, message?: string, headers: Record<string, string> = {}): CoreResponse {
  return jsonResponse(status, { error: { status, message: message ?? STATUS_TEXT[status] ?? `HTTP ${status}` } }, headers)
}

type Params = Record<string, string>
type Json = Record<string, unknown>

/** What an endpoint handler gets. `body` is `undefined` only when invisible (msw GET). */
interface Call {
  ctx: RouteContext
  req: CoreRequest
  company: CompanyState
  params: Params
  query: URLSearchParams
  body: Json | undefined
}

type Handler = (call: Call) => CoreResponse

interface Route {
  /** Segments after `/rest/v1`; `:name` is a parameter. */
  segments: readonly string[]
  methods: Readonly<Record<string, Handler>>
}

const ROUTES: readonly Route[] = [
  { segments: ['auth', 'token'], methods: { POST: issueToken } },
  { segments: ['customer-users'], methods: { GET: listCustomerUsers } },
  { segments: ['customer-users', ':id'], methods: { PUT: updateCustomerUser } },
  { segments: ['agents'], methods: { GET: listAgents } },
  { segments: ['conversations'], methods: { GET: listConversations } },
  { segments: ['conversations', ':id', 'messages'], methods: { GET: listMessages } },
]

/** Handles one request against the state. Never throws for client input. */
export function handleRequest(ctx: RouteContext, req: CoreRequest): CoreResponse {
  const found = matchRoute(req.pathname)
  if (!found) return errorResponse(404, `No route for ${req.method} ${req.pathname}`)
  const handler = Object.hasOwn(found.route.methods, req.method) ? found.route.methods[req.method] : undefined
  if (!handler) {
    return errorResponse(405, `Method ${req.method} not allowed`, { allow: Object.keys(found.route.methods).join(', ') })
  }
  const params: Params = {}
  for (const [name, raw] of Object.entries(found.rawParams)) {
    try {
      params[name] = decodeURIComponent(raw)
    } catch {
      return errorResponse(400, `Malformed percent-encoding in path parameter ${name}`)
    }
  }

  const parsed = parseBody(req)
  if (parsed.kind === 'invalid') return errorResponse(400, parsed.message)

  let company: CompanyState | undefined
  if (parsed.kind === 'invisible') {
    // msw mode GET: the body cannot be seen. Require what a credentialed JSON
    // body would show in the headers, and attribute it to the chosen company.
    const contentLength = Number(req.headers['content-length'] ?? '0')
    if (!isJsonContentType(req.headers['content-type']) || !(contentLength > 0)) {
      return errorResponse(401, 'Missing API credentials (no JSON body)')
    }
    company = ctx.companyForInvisibleBody !== undefined ? ctx.state.companies.get(ctx.companyForInvisibleBody) : ctx.state.firstCompany()
    if (!company) return errorResponse(401, 'Invalid API credentials')
  } else if (parsed.kind === 'absent') {
    return errorResponse(401, `Missing API credentials (${parsed.reason})`)
  } else {
    const { keyId, keySecret } = parsed.value
    if (keyId === undefined || keySecret === undefined) return errorResponse(401, 'Missing API credentials')
    company = ctx.state.authenticate(keyId, keySecret)
    if (!company) return errorResponse(401, 'Invalid API credentials')
  }

  return handler({
    ctx,
    req,
    company,
    params,
    query: new URLSearchParams(req.search),
    body: parsed.kind === 'object' ? parsed.value : undefined,
  })
}

function matchRoute(pathname: string): { route: Route; rawParams: Params } | undefined {
  const segments = pathname.split('/')
  if (segments[0] !== '' || segments[1] !== 'rest' || segments[2] !== 'v1') return undefined
  const rest = segments.slice(3)
  for (const route of ROUTES) {
    if (route.segments.length !== rest.length) continue
    const rawParams: Params = {}
    let ok = true
    for (let i = 0; i < rest.length; i++) {
      const want = route.segments[i] as string
      const got = rest[i] as string
      if (want.startsWith(':')) {
        if (got === '') {
          ok = false
          break
        }
        rawParams[want.slice(1)] = got
      } else if (want !== got) {
        ok = false
        break
      }
    }
    if (ok) return { route, rawParams }
  }
  return undefined
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false
  const media = (value.split(';')[0] ?? '').trim().toLowerCase()
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'))
}

type ParsedBody =
  { kind: 'invisible' } | { kind: 'absent'; reason: string } | { kind: 'invalid'; message: string } | { kind: 'object'; value: Json }

function parseBody(req: CoreRequest): ParsedBody {
  if (!req.bodyVisible) return { kind: 'invisible' }
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

function isPlainObject(value: unknown): value is Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === null
}

// ---------------------------------------------------------------- paging

interface Paging {
  page: number
  limit: number
}

/** Reads `page` (default 1) and `limit` (default `defaultLimit`, max 100) from the query. */
function parsePaging(query: URLSearchParams, defaultLimit: number): Paging | string {
  const page = parsePositiveInt(query, 'page', 1)
  if (typeof page === 'string') return page
  const limit = parsePositiveInt(query, 'limit', defaultLimit)
  if (typeof limit === 'string') return limit
  if (limit > 100) return 'limit must not exceed 100'
  return { page, limit }
}

function parsePositiveInt(query: URLSearchParams, name: string, fallback: number): number | string {
  const values = query.getAll(name)
  if (values.length === 0) return fallback
  if (values.length > 1) return `${name} must be given once`
  const text = values[0] as string
  if (!/^[0-9]+$/.test(text)) return `${name} must be a positive integer`
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 1) return `${name} must be a positive integer`
  return n
}

function pageOf<T, R>(items: readonly T[], paging: Paging, map: (item: T) => R): { data: R[]; pagination: object } {
  const total = items.length
  const start = (paging.page - 1) * paging.limit
  const data = start < total ? items.slice(start, start + paging.limit).map(map) : []
  return {
    data,
    pagination: { page: paging.page, limit: paging.limit, total, total_pages: Math.ceil(total / paging.limit) },
  }
}

// ---------------------------------------------------------------- output shapes

function userOut(u: StoredCustomerUser): object {
  return {
    id: u.id,
    external_id: u.external_id,
    name: u.name,
    email: u.email,
    metadata: u.metadata,
    active: u.active,
    created_at: u.created_at,
    last_seen_at: u.last_seen_at,
  }
}

function updatedUserOut(u: StoredCustomerUser): UpdatedCustomerUserRecord {
  return {
    id: u.id,
    external_id: u.external_id,
    name: u.name,
    email: u.email,
    metadata: u.metadata,
    active: u.active,
    updated_at: u.updated_at,
  }
}

// ---------------------------------------------------------------- endpoints

/** Spec endpoint 1: POST /rest/v1/auth/token. */
function issueToken({ ctx, company, body }: Call): CoreResponse {
  const b = body ?? {}
  const userId = b['userId']
  if (typeof userId !== 'string' || userId === '') return errorResponse(400, 'userId must be a non-empty string')
  const agentId = b['agentId']
  if (agentId !== undefined && (typeof agentId !== 'string' || agentId === '')) {
    return errorResponse(400, 'agentId must be a non-empty string when given')
  }
  let lifetime = DEFAULT_TOKEN_LIFETIME_S
  if (b['expiresIn'] !== undefined) {
    const parsed = parseExpiresIn(b['expiresIn'])
    if (parsed === undefined) return errorResponse(400, 'expiresIn must be <positive integer><h|d>, e.g. "1h" or "7d"')
    lifetime = parsed
  }
  const agent = agentId === undefined ? undefined : company.agents.get(agentId)
  if (agentId !== undefined && !agent) return errorResponse(404, 'Agent not found')

  const now = ctx.now()
  const nowIso = now.toISOString()
  let user = company.usersByExternalId.get(userId)
  if (user) {
    user.last_seen_at = nowIso
  } else {
    user = {
      id: ctx.state.newUserId(company),
      external_id: userId,
      name: null,
      email: null,
      metadata: {},
      active: true,
      created_at: nowIso,
      last_seen_at: nowIso,
      updated_at: nowIso,
    }
    ctx.state.addUser(company, user)
  }
  const iat = Math.floor(now.getTime() / 1000)
  const token = ctx.tokens.sign({
    sub: user.id,
    external_id: user.external_id,
    company_id: company.id,
    agent_id: agent ? agent.id : null,
    iat,
    exp: iat + lifetime,
  })
  return jsonResponse(200, {
    token,
    user: { id: user.id, externalId: user.external_id, companyId: company.id, agentId: agent ? agent.id : null },
    agent: agent ? { id: agent.id, name: agent.name, active: agent.active } : null,
  })
}

const FILTERS = ['name', 'email', 'external_id'] as const

/** Spec endpoint 2: GET /rest/v1/customer-users (filters in the body). */
function listCustomerUsers({ ctx, company, query, body }: Call): CoreResponse {
  const paging = parsePaging(query, 20)
  if (typeof paging === 'string') return errorResponse(400, paging)
  const users = ctx.state.users(company)
  if (body === undefined) {
    // msw mode: the GET body (and so any filter) was not visible.
    return jsonResponse(200, pageOf(users, paging, userOut), {
      [WARNING_HEADER]:
        'msw mode: GET request bodies are not visible, so customer-user filters (name, email, external_id) were not applied and credentials were not checked',
    })
  }
  const filters: Partial<Record<(typeof FILTERS)[number], string>> = {}
  for (const name of FILTERS) {
    const value = body[name]
    if (value === undefined) continue
    if (typeof value !== 'string') return errorResponse(400, `${name} filter must be a string`)
    filters[name] = value
  }
  const matches = makeMatcher(ctx.filterMatch)
  const selected =
    Object.keys(filters).length === 0
      ? users
      : users.filter(
          (u) =>
            (filters.external_id === undefined || u.external_id === filters.external_id) &&
            (filters.name === undefined || matches(u.name, filters.name)) &&
            (filters.email === undefined || matches(u.email, filters.email)),
        )
  return jsonResponse(200, pageOf(selected, paging, userOut))
}

function makeMatcher(mode: FilterMatch): (value: string | null, filter: string) => boolean {
  if (mode === 'partial') {
    return (value, filter) => value !== null && value.toLowerCase().includes(filter.toLowerCase())
  }
  return (value, filter) => value === filter
}

/** Spec endpoint 3: PUT /rest/v1/customer-users/:id. */
function updateCustomerUser({ ctx, company, params, body }: Call): CoreResponse {
  const b = body ?? {}
  const changes: { name?: string; email?: string; metadata?: Json } = {}
  if (b['name'] !== undefined) {
    if (typeof b['name'] !== 'string') return errorResponse(400, 'name must be a string')
    changes.name = b['name']
  }
  if (b['email'] !== undefined) {
    if (typeof b['email'] !== 'string') return errorResponse(400, 'email must be a string')
    changes.email = b['email']
  }
  if (b['metadata'] !== undefined) {
    if (!isPlainObject(b['metadata'])) return errorResponse(400, 'metadata must be a JSON object')
    changes.metadata = b['metadata']
  }
  const user = company.users.get(params['id'] ?? '')
  if (!user) return errorResponse(404, 'Customer user not found')
  if (changes.name !== undefined) user.name = changes.name
  if (changes.email !== undefined) user.email = changes.email
  if (changes.metadata !== undefined) user.metadata = changes.metadata // replaced, not merged
  const now = ctx.now().getTime()
  const previous = Date.parse(user.updated_at)
  user.updated_at = new Date(Number.isNaN(previous) || now > previous ? now : previous + 1).toISOString()
  return jsonResponse(200, updatedUserOut(user))
}

/** Spec endpoint 4: GET /rest/v1/agents. */
function listAgents({ ctx, company, query }: Call): CoreResponse {
  const paging = parsePaging(query, 20)
  if (typeof paging === 'string') return errorResponse(400, paging)
  return jsonResponse(
    200,
    pageOf(ctx.state.agents(company), paging, (a) => ({
      id: a.id,
      name: a.name,
      active: a.active,
      created_at: a.created_at,
      updated_at: a.updated_at,
    })),
  )
}

/** Spec endpoint 5: GET /rest/v1/conversations. */
function listConversations({ ctx, company, query }: Call): CoreResponse {
  const paging = parsePaging(query, 20)
  if (typeof paging === 'string') return errorResponse(400, paging)
  return jsonResponse(
    200,
    pageOf(ctx.state.conversations(company), paging, (c) => ({
      id: c.record.id,
      title: c.record.title,
      customer_user_id: c.record.customer_user_id,
      message_count: messageCount(c),
      created_at: c.record.created_at,
      updated_at: c.record.updated_at,
    })),
  )
}

/** Spec endpoint 6: GET /rest/v1/conversations/:id/messages (limit default 50). */
function listMessages({ ctx, company, params, query }: Call): CoreResponse {
  const paging = parsePaging(query, 50)
  if (typeof paging === 'string') return errorResponse(400, paging)
  const conversation = company.conversations.get(params['id'] ?? '')
  if (!conversation) return errorResponse(404, 'Conversation not found')
  const page = pageOf(ctx.state.messages(conversation), paging, (m) => ({
    id: m.id,
    content: m.content,
    role: m.role,
    conversation_id: m.conversation_id,
    created_at: m.created_at,
  }))
  return jsonResponse(200, {
    data: page.data,
    pagination: page.pagination,
    conversation: { id: conversation.record.id, title: conversation.record.title },
  })
}
