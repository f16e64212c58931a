/**
 * The endpoints of the spec, one handler each: {@link ROUTES} pairs every row of the spec's table
 * (`ENDPOINTS` in src/endpoints.ts, the one data module the fake shares with the SDK: routes, never
 * behaviour) with its handler, and the compiler holds that record complete. A handler gets an
 * authenticated, parsed {@link Call} from the router and returns a response; it validates its own
 * query and body fields (400) and looks up its records (404).
 *
 * @module
 */
import { errorResponse, jsonResponse, type FakeResponse } from './http.ts'
import type { EndpointName } from './rate-limit.ts'
import { pageOf, parsePaging } from './paging.ts'
import { isPlainObject, type Call, type Endpoint, type Json } from './router.ts'
import { nextUpdatedAt } from './state.ts'
import { DEFAULT_TOKEN_LIFETIME_S, parseExpiresIn } from './token.ts'
import type { FilterMatch } from './types.ts'
import { ENDPOINTS as SPEC, type Endpoint as SpecEndpoint, type EndpointKey } from '../endpoints.ts'
import { agentView, conversationView, customerUserView, messageView, updatedCustomerUserView } from './views.ts'

/** Customer-user filters, read from the body of `GET /customer-users` (spec endpoint 2). */
const FILTERS = SPEC.listCustomerUsers.bodyFields

/** The handler of each endpoint of the spec's table. */
const HANDLERS = {
  issueToken,
  listCustomerUsers,
  updateCustomerUser,
  listAgents,
  listConversations,
  listMessages,
} satisfies Record<EndpointKey, (call: Call) => FakeResponse>

/**
 * Each endpoint as the spec writes it (its method and path, a parameter as `:id`): the name a limit
 * of `rateLimit.endpoints` is given by (rate-limit.ts).
 */
export const ENDPOINT_NAMES = {
  issueToken: 'POST /rest/v1/auth/token',
  listCustomerUsers: 'GET /rest/v1/customer-users',
  updateCustomerUser: 'PUT /rest/v1/customer-users/:id',
  listAgents: 'GET /rest/v1/agents',
  listConversations: 'GET /rest/v1/conversations',
  listMessages: 'GET /rest/v1/conversations/:id/messages',
} as const satisfies Record<EndpointKey, EndpointName>

/** Every endpoint of the fake, in the spec's order: the table's method, path and body members, and its handler. */
export const ROUTES: readonly Endpoint[] = (Object.keys(SPEC) as EndpointKey[]).map((key) => {
  const { method, path, bodyFields } = SPEC[key] as SpecEndpoint
  return {
    name: ENDPOINT_NAMES[key],
    method,
    // The table writes a parameter `{name}`; the router reads `:name`.
    path: path.replace(/\{(\w+)\}/g, ':$1'),
    handle: HANDLERS[key],
    ...(bodyFields === undefined ? {} : { bodyFields }),
  }
})

/** Spec endpoint 1: POST /rest/v1/auth/token. */
function issueToken({ ctx, company, body }: Call): FakeResponse {
  const userId = body['userId']
  if (typeof userId !== 'string' || userId === '') return errorResponse(400, 'userId must be a non-empty string')
  const agentId = body['agentId']
  if (agentId !== undefined && (typeof agentId !== 'string' || agentId === '')) {
    return errorResponse(400, 'agentId must be a non-empty string when given')
  }
  let lifetime = DEFAULT_TOKEN_LIFETIME_S
  if (body['expiresIn'] !== undefined) {
    const parsed = parseExpiresIn(body['expiresIn'])
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

/** Spec endpoint 2: GET /rest/v1/customer-users (filters in the body). */
function listCustomerUsers({ ctx, company, query, body }: Call): FakeResponse {
  const paging = parsePaging(query, SPEC.listCustomerUsers.defaultLimit)
  if (typeof paging === 'string') return errorResponse(400, paging)
  const filters: Partial<Record<(typeof FILTERS)[number], string>> = {}
  for (const name of FILTERS) {
    const value = body[name]
    if (value === undefined) continue
    if (typeof value !== 'string') return errorResponse(400, `${name} filter must be a string`)
    filters[name] = value
  }
  ctx.moves.beforePage({ list: 'customerUsers', company, page: paging.page }, ctx.state, ctx.now)
  const users = company.userList.items()
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
  return jsonResponse(200, pageOf(selected, paging, customerUserView))
}

function makeMatcher(mode: FilterMatch): (value: string | null, filter: string) => boolean {
  if (mode === 'partial') {
    return (value, filter) => value !== null && value.toLowerCase().includes(filter.toLowerCase())
  }
  return (value, filter) => value === filter
}

/** Spec endpoint 3: PUT /rest/v1/customer-users/:id. */
function updateCustomerUser({ ctx, company, params, body }: Call): FakeResponse {
  const changes: { name?: string; email?: string; metadata?: Json } = {}
  if (body['name'] !== undefined) {
    if (typeof body['name'] !== 'string') return errorResponse(400, 'name must be a string')
    changes.name = body['name']
  }
  if (body['email'] !== undefined) {
    if (typeof body['email'] !== 'string') return errorResponse(400, 'email must be a string')
    changes.email = body['email']
  }
  if (body['metadata'] !== undefined) {
    if (!isPlainObject(body['metadata'])) return errorResponse(400, 'metadata must be a JSON object')
    changes.metadata = body['metadata']
  }
  const user = company.users.get(params['id'] ?? '')
  if (!user) return errorResponse(404, 'Customer user not found')
  if (changes.name !== undefined) user.name = changes.name
  if (changes.email !== undefined) user.email = changes.email
  if (changes.metadata !== undefined) user.metadata = changes.metadata // replaced, not merged
  // updated_at always moves forward, even with a frozen clock, so a client can order updates.
  user.updated_at = nextUpdatedAt(user.updated_at, ctx.now())
  return jsonResponse(200, updatedCustomerUserView(user))
}

/** Spec endpoint 4: GET /rest/v1/agents (active or not). */
function listAgents({ ctx, company, query }: Call): FakeResponse {
  const paging = parsePaging(query, SPEC.listAgents.defaultLimit)
  if (typeof paging === 'string') return errorResponse(400, paging)
  ctx.moves.beforePage({ list: 'agents', company, page: paging.page }, ctx.state, ctx.now)
  return jsonResponse(200, pageOf(company.agentList.items(), paging, agentView))
}

/** Spec endpoint 5: GET /rest/v1/conversations. */
function listConversations({ ctx, company, query }: Call): FakeResponse {
  const paging = parsePaging(query, SPEC.listConversations.defaultLimit)
  if (typeof paging === 'string') return errorResponse(400, paging)
  ctx.moves.beforePage({ list: 'conversations', company, page: paging.page }, ctx.state, ctx.now)
  return jsonResponse(200, pageOf(company.conversationList.items(), paging, conversationView))
}

/** Spec endpoint 6: GET /rest/v1/conversations/:id/messages (limit default 50, oldest first). */
function listMessages({ ctx, company, params, query }: Call): FakeResponse {
  const paging = parsePaging(query, SPEC.listMessages.defaultLimit)
  if (typeof paging === 'string') return errorResponse(400, paging)
  const conversation = company.conversations.get(params['conversationId'] ?? '')
  if (!conversation) return errorResponse(404, 'Conversation not found')
  ctx.moves.beforePage({ list: 'messages', company, page: paging.page, conversation }, ctx.state, ctx.now)
  const page = pageOf(conversation.messages.items(), paging, messageView)
  return jsonResponse(200, { ...page, conversation: { id: conversation.record.id, title: conversation.record.title } })
}
