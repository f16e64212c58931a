/**
 * `createFakeChatService`: composes the state, the engine and the two
 * node:http listen mode into the public object (msw mode lives in msw.ts).
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { Engine } from './engine.ts'
import { startHttpServer } from './http-server.ts'
import { ENGINE_KEY } from './engine-key.ts'
import { messageCount, ServiceState, type CompanyState } from './state.ts'
import { TokenSigner } from './token.ts'
import type {
  AgentRecord,
  ConversationRecord,
  FakeChatServiceOptions,
  FakeSeed,
  FakeServerHandle,
  FaultSpec,
  MessageRecord,
  RecordedRequest,
  StoredCustomerUser,
  VerifyTokenResult,
} from './types.ts'

/**
 * An in-memory fake of the whole Chat Service (all six endpoints of the spec),
 * served over real HTTP (`listen`) or through msw (`createFakeHandlers` from
 * `chat-service-sdk/testing/msw`). Both serve the same state. Accessors return copies in list order (created_at, then id).
 */
export interface FakeChatService {
  /** Adds companies, keys and records to the state (duplicate ids throw). */
  seed(data: FakeSeed): void
  /** Back to the `seed` option's data; clears recorded requests and queued faults. */
  reset(): void
  /**
   * Starts a `node:http` server (host default `127.0.0.1`, port default 0 =
   * free port). Full fidelity: reads every request's body, GET included.
   * `close()` also destroys keep-alive sockets. Several servers may share the state.
   */
  listen(opts?: { port?: number; host?: string }): Promise<FakeServerHandle>
  /**
   * The next `n` requests that match `fault.match` (default: any) get `fault`
   * instead of (or on top of) normal handling; they are still recorded.
   * Faults queue first-in first-out. See {@link FaultSpec}.
   */
  failNext(n: number, fault: FaultSpec): void
  /** Drops every queued fault. */
  clearFaults(): void
  /** Requests received so far, oldest first (a live read-only view). */
  readonly requests: readonly RecordedRequest[]
  /** Empties `requests`. */
  clearRequests(): void
  /** Checks a chat token issued by this instance (structure, signature, expiry against `now`). */
  verifyToken(token: string): VerifyTokenResult
  /** Company ids in seeding order. */
  companyIds(): string[]
  /** A customer user incl. the internal `updated_at`, or `undefined` (also for another company's user). */
  getCustomerUser(companyId: string, id: string): StoredCustomerUser | undefined
  /** The customer user with this `external_id` in the company, or `undefined`. */
  findCustomerUserByExternalId(companyId: string, externalId: string): StoredCustomerUser | undefined
  /** All customer users of the company (incl. `updated_at`). */
  listCustomerUsers(companyId: string): StoredCustomerUser[]
  /** All agents of the company. */
  listAgents(companyId: string): AgentRecord[]
  /** All conversations of the company, with the `message_count` the API reports. */
  listConversations(companyId: string): ConversationRecord[]
  /** All messages of a conversation of the company, oldest first; `[]` when unknown. */
  listMessages(companyId: string, conversationId: string): MessageRecord[]
}

/**
 * Creates an in-memory fake of the Chat Service (spec: the whole interface).
 *
 * Choices where the spec is open (all documented on the types):
 * list order created_at then id; name/email filters exact by default
 * (`filterMatch`); metadata replaced on update; error body
 * `{ "error": { "status", "message" } }`; users created by token issuance have
 * `name: null, email: null, metadata: {}`; `/rest/v1/v1/…` and trailing
 * slashes are 404; tokens are HS256 JWTs.
 */
export function createFakeChatService(options: FakeChatServiceOptions = {}): FakeChatService {
  const state = new ServiceState()
  const now = options.now ?? (() => new Date())
  const tokens = new TokenSigner(options.tokenSecret ?? randomBytes(32).toString('hex'))
  const latencyMs = options.latencyMs ?? 0
  if (!(Number.isFinite(latencyMs) && latencyMs >= 0)) throw new RangeError('chat-service-sdk/testing: latencyMs must be >= 0')
  const engine = new Engine({ state, filterMatch: options.filterMatch ?? 'exact', now, tokens }, latencyMs, options.recordRequests ?? true)
  const initial = options.seed
  if (initial) state.seed(initial)

  const company = (id: string): CompanyState | undefined => state.companies.get(id)
  const copyUser = (u: StoredCustomerUser): StoredCustomerUser => ({ ...u, metadata: structuredClone(u.metadata) })

  const fake: FakeChatService = {
    seed(data) {
      state.seed(data)
    },
    reset() {
      state.clear()
      engine.requests.length = 0
      engine.faults.clear()
      if (initial) state.seed(initial)
    },
    listen(opts) {
      return startHttpServer(engine, opts)
    },
    failNext(n, fault) {
      engine.faults.add(n, fault)
    },
    clearFaults() {
      engine.faults.clear()
    },
    get requests() {
      return engine.requests
    },
    clearRequests() {
      engine.requests.length = 0
    },
    verifyToken(token) {
      return tokens.verify(token, Math.floor(now().getTime() / 1000))
    },
    companyIds() {
      return [...state.companies.keys()]
    },
    getCustomerUser(companyId, id) {
      const user = company(companyId)?.users.get(id)
      return user && copyUser(user)
    },
    findCustomerUserByExternalId(companyId, externalId) {
      const user = company(companyId)?.usersByExternalId.get(externalId)
      return user && copyUser(user)
    },
    listCustomerUsers(companyId) {
      const c = company(companyId)
      return c ? state.users(c).map(copyUser) : []
    },
    listAgents(companyId) {
      const c = company(companyId)
      return c ? state.agents(c).map((a) => ({ ...a })) : []
    },
    listConversations(companyId) {
      const c = company(companyId)
      return c
        ? state.conversations(c).map((conv) => ({
            id: conv.record.id,
            title: conv.record.title,
            customer_user_id: conv.record.customer_user_id,
            message_count: messageCount(conv),
            created_at: conv.record.created_at,
            updated_at: conv.record.updated_at,
          }))
        : []
    },
    listMessages(companyId, conversationId) {
      const conv = company(companyId)?.conversations.get(conversationId)
      return conv ? state.messages(conv).map((m) => ({ ...m })) : []
    },
  }
  // For chat-service-sdk/testing/msw: not enumerable, so it stays out of inspect and JSON.
  Object.defineProperty(fake, ENGINE_KEY, { value: engine })
  return fake
}
