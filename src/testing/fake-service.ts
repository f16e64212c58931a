/**
 * `createFakeChatService`: composes the state, the engine and listen mode (node:http) into the
 * public object. msw mode lives in msw.ts and reaches the engine through `ENGINE_KEY`.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { appendMessages, deleteConversation, deleteMessage } from './changes.ts'
import { compressionPolicy } from './content-coding.ts'
import { createControl } from './control.ts'
import { Engine } from './engine.ts'
import { ListMoves } from './list-moves.ts'
import { startHttpServer } from './http-server.ts'
import { ENGINE_KEY } from './engine-key.ts'
import { ENDPOINT_NAMES } from './endpoints.ts'
import { RateLimiter } from './rate-limit.ts'
import { ServiceState, type CompanyState } from './state.ts'
import { TokenSigner } from './token.ts'
import { agentView, conversationView, messageView, storedCustomerUserView } from './views.ts'
import type {
  AgentRecord,
  ConversationRecord,
  DeprecationHeaders,
  FakeChatServiceOptions,
  FakeListenOptions,
  FakeSeed,
  FakeServerHandle,
  FaultSpec,
  ListMove,
  ListMoveHandle,
  MessageRecord,
  MessageSeed,
  RecordedRequest,
  StoredCustomerUser,
  VerifyTokenResult,
} from './types.ts'

/**
 * An in-memory fake of the whole Chat Service (every endpoint of the spec), served over real
 * HTTP (`listen`) or through msw (`createFakeHandlers` from `chat-service-sdk/testing/msw`). Both
 * serve the same state. Accessors return copies in list order (created_at, then id). Where the
 * spec is open, the fake's choices are listed in TESTING.md ("The fake's choices").
 */
export interface FakeChatService {
  /**
   * Adds companies, keys and records to the state, all or nothing. A company id the fake already
   * has is added to (its new keys and records join the existing ones; a given `name` replaces
   * its name): the way to add a conversation, user or agent between runs. Records are taken as
   * given (a seeded message does not move its conversation's `updated_at`; `appendMessages` does).
   * @throws Error (and nothing is applied) for duplicate ids in a company, a `keyId` already
   * registered to another company or secret, or a message of an unknown conversation.
   */
  seed(data: FakeSeed): void
  /** Back to the `seed` option's data; clears recorded requests, queued faults, list moves and the rate limit's buckets (all full). */
  reset(): void
  /**
   * Starts a `node:http` server (host default `127.0.0.1`, port default 0 = free port). Full
   * fidelity: reads every request's body, GET included. `close()` also destroys keep-alive
   * sockets. Several servers may share the state. While it listens, a network made by
   * `createMswNetwork` lets requests to it through, so one test file can use both modes.
   * It also answers the control endpoints on its own origin, to loopback peers only (any other
   * peer gets 403): `POST /__fake/faults` (`{ n, fault }`), `POST /__fake/seed` ({@link FakeSeed}),
   * `POST /__fake/append-messages` (`{ companyId, conversationId, messages }`),
   * `POST /__fake/delete-message`, `POST /__fake/delete-conversation`, `POST /__fake/list-moves`
   * ({@link ListMove}), `DELETE /__fake/list-moves`, `GET /__fake/requests`
   * (the log, key secrets redacted), `DELETE /__fake/faults`, `DELETE /__fake/requests`,
   * `POST` and `DELETE /__fake/deprecation` (as `setDeprecation`) and `POST /__fake/reset`; bad input is a 400 that says why (TESTING.md, "Steering a listening fake").
   *
   * `compression` and `compressionMinBytes` override the fake's options for this server (see
   * `FakeCompression`).
   * @throws the `listen` error of `node:http` (e.g. `EADDRINUSE`) when the port is taken;
   * RangeError (before listening) for a `compression` or `compressionMinBytes` out of range.
   */
  listen(opts?: FakeListenOptions): Promise<FakeServerHandle>
  /**
   * The next `n` requests that match `fault.match` (default: any) get `fault`
   * instead of (or on top of) normal handling; they are still recorded.
   * Faults queue first-in first-out. See {@link FaultSpec}.
   */
  failNext(n: number, fault: FaultSpec): void
  /** Drops every queued fault. */
  clearFaults(): void
  /**
   * From now on every response of the API carries this deprecation notice (`undefined`: none);
   * `reset()` returns to the `deprecation` option's. See {@link DeprecationHeaders}.
   * @throws TypeError when a header given is not a string.
   */
  setDeprecation(headers: DeprecationHeaders | undefined): void
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
  /**
   * Appends messages to a conversation, as the service would when its customer user and agent
   * talk: `message_count` grows by their number and `updated_at` moves forward (at least 1 ms
   * past its previous value, even with a frozen `now`, and never before the newest message).
   *
   * `messages` is a count (generated messages: ids `msg_fake_000001`, … skipping ids in use,
   * roles alternating after the conversation's newest message, `created_at` = `now`, or 1 ms after
   * the newest message when that is later) or {@link MessageSeed}s (the same defaults for what
   * they omit). Every message takes its place in list order (created_at, then id): generated
   * times put them after the existing messages; a seed's earlier `created_at` back-dates it.
   *
   * @returns the appended messages (copies), in the order given.
   * @throws Error for an unknown company or conversation, a count that is not an integer from 0
   * to 1,000,000, a malformed seed (role, content, `created_at` not ISO 8601, `conversation_id`
   * of another conversation), an id already used in the company, or a conversation seeded with a
   * `message_count` but without its messages; nothing is appended then.
   */
  appendMessages(companyId: string, conversationId: string, messages: number | readonly MessageSeed[]): MessageRecord[]
  /**
   * Deletes one message of a conversation: `message_count` drops by one and `updated_at` moves
   * forward as in {@link FakeChatService.appendMessages}.
   * @throws Error for an unknown company or conversation, or a message not in that conversation.
   */
  deleteMessage(companyId: string, conversationId: string, messageId: string): void
  /**
   * Deletes a conversation and its messages: the conversation list no longer shows it (the
   * following ones move up a place), and its messages endpoint answers 404.
   * @throws Error for an unknown company or conversation.
   */
  deleteConversation(companyId: string, conversationId: string): void
  /**
   * Moves a list while a client reads it: on a schedule (when page p is asked, or on every k-th
   * request of the list), deletes and inserts records before the request is answered, in both
   * modes (see {@link ListMove}). Moves fire in the order they were added; `reset()` and
   * `clearListMoves()` remove them.
   * @returns a handle: how many times the move fired, and `cancel()`.
   * @throws Error for a malformed move (an unknown list or member, a `when` that is not
   * `{ page }` or `{ every }`, a position or count out of range); nothing is added then.
   */
  moveList(move: ListMove): ListMoveHandle
  /** Removes every list move (see {@link FakeChatService.moveList}). */
  clearListMoves(): void
}

/**
 * Creates an in-memory fake of the Chat Service (spec: the whole interface). Where the spec is
 * open, the fake's choices are listed in TESTING.md ("The fake's choices").
 * @throws TypeError when a header of `deprecation` is not a string; RangeError when `latencyMs` is negative or not finite, `recordRequests` is a number that is
 * not an integer of at least 0, `compression` is none of `true`, `false`, `'off'`, `'gzip'` and
 * `'br'`, `compressionMinBytes` is not an integer of at least 0, or `rateLimit` is out of range
 * (`requestsPerSecond` must be above 0, `burst` an integer of at least 1; `endpoints` names endpoints
 * of the spec); Error when `seed` is
 * invalid (duplicate ids, unknown conversations, a key registered twice).
 */
export function createFakeChatService(options: FakeChatServiceOptions = {}): FakeChatService {
  const state = new ServiceState()
  const now = options.now ?? (() => new Date())
  const tokens = new TokenSigner(options.tokenSecret ?? randomBytes(32).toString('hex'))
  const latencyMs = options.latencyMs ?? 0
  if (!(Number.isFinite(latencyMs) && latencyMs >= 0)) throw new RangeError('chat-service-sdk/testing: latencyMs must be >= 0')
  const rateLimit = options.rateLimit === undefined ? undefined : new RateLimiter(options.rateLimit, Object.values(ENDPOINT_NAMES))
  const moves = new ListMoves()
  const engine = new Engine(
    { state, filterMatch: options.filterMatch ?? 'exact', now, tokens, rateLimit, moves },
    {
      latencyMs,
      maxRecordedRequests: recordLimit(options.recordRequests),
      compression: compressionPolicy(options.compression, options.compressionMinBytes),
      deprecation: deprecationHeaders(options.deprecation),
    },
  )
  const initial = options.seed
  if (initial) state.seed(initial)

  const company = (id: string): CompanyState | undefined => state.companies.get(id)
  // Accessors hand out copies: a test that edits what it got must not change the fake.
  const copyUser = (u: StoredCustomerUser): StoredCustomerUser => structuredClone(storedCustomerUserView(u))

  const fake: FakeChatService = {
    seed(data) {
      state.seed(data)
    },
    reset() {
      state.clear()
      rateLimit?.clear()
      engine.clearRequests()
      engine.faults.clear()
      engine.options.deprecation = deprecationHeaders(options.deprecation)
      moves.clear()
      if (initial) state.seed(initial)
    },
    async listen(opts = {}) {
      // Checked before the server starts: a bad value rejects with a RangeError, nothing listens.
      const compression =
        opts.compression === undefined && opts.compressionMinBytes === undefined
          ? engine.options.compression
          : compressionPolicy(opts.compression ?? options.compression, opts.compressionMinBytes ?? options.compressionMinBytes)
      return startHttpServer(engine, { port: opts.port, host: opts.host, compression }, control)
    },
    failNext(n, fault) {
      engine.faults.add(n, fault)
    },
    clearFaults() {
      engine.faults.clear()
    },
    setDeprecation(headers) {
      engine.options.deprecation = deprecationHeaders(headers)
    },
    get requests() {
      return engine.requests
    },
    clearRequests() {
      engine.clearRequests()
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
      return company(companyId)?.userList.items().map(copyUser) ?? []
    },
    listAgents(companyId) {
      return company(companyId)?.agentList.items().map(agentView) ?? []
    },
    listConversations(companyId) {
      return company(companyId)?.conversationList.items().map(conversationView) ?? []
    },
    listMessages(companyId, conversationId) {
      return company(companyId)?.conversations.get(conversationId)?.messages.items().map(messageView) ?? []
    },
    appendMessages(companyId, conversationId, messages) {
      return appendMessages(state, now(), companyId, conversationId, messages)
    },
    deleteMessage(companyId, conversationId, messageId) {
      deleteMessage(state, now(), companyId, conversationId, messageId)
    },
    deleteConversation(companyId, conversationId) {
      deleteConversation(state, companyId, conversationId)
    },
    moveList(move) {
      return moves.add(move)
    },
    clearListMoves() {
      moves.clear()
    },
  }
  const control = createControl(
    fake,
    () => [...state.keys.values()].map((key) => key.keySecret),
    () => engine.options.maxRecordedRequests > 0,
  )
  // For chat-service-sdk/testing/msw: not enumerable, so it stays out of inspect and JSON.
  Object.defineProperty(fake, ENGINE_KEY, { value: engine })
  return fake
}

/** The `recordRequests` option as a number of requests to keep. */
function recordLimit(option: boolean | number | undefined): number {
  if (option === undefined || option === true) return Number.POSITIVE_INFINITY
  if (option === false) return 0
  if (!Number.isSafeInteger(option) || option < 0) {
    throw new RangeError('chat-service-sdk/testing: recordRequests must be a boolean or an integer of at least 0')
  }
  return option
}

/** A copy of a deprecation notice (a caller changing theirs later changes nothing), each header checked to be a string. */
function deprecationHeaders(headers: DeprecationHeaders | undefined): DeprecationHeaders | undefined {
  if (headers === undefined) return undefined
  const copy: DeprecationHeaders = {}
  for (const name of ['deprecation', 'sunset', 'link'] as const) {
    const value: unknown = headers[name]
    if (value === undefined) continue
    if (typeof value !== 'string')
      throw new TypeError(`chat-service-sdk/testing: the deprecation notice's ${name} must be a string (the header as sent)`)
    copy[name] = value
  }
  return copy
}
