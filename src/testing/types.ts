// Public types of the fake Chat Service (`chat-service-sdk/testing`).
//
// Records use the service's own field names (snake_case), as in the spec's
// "Resources and their fields". This file is independent of the SDK's own
// types on purpose: the fake is a second, separate reading of the spec.

/**
 * A customer user as the service stores and lists it (spec: "Customer user").
 * Timestamps are ISO 8601 strings.
 *
 * `name` and `email` may be `null` in the fake: a user created implicitly by
 * token issuance has no name or e-mail yet (the spec does not say what the
 * service stores then; `null` is the fake's choice).
 */
export interface CustomerUserRecord {
  /** Internal customer user id. */
  id: string
  /** The calling system's own user id (token issuance `userId`). */
  external_id: string
  /** Display name; `null` for a user created by token issuance. */
  name: string | null
  /** E-mail address; `null` for a user created by token issuance. */
  email: string | null
  /** Free-form JSON object; nesting allowed. */
  metadata: Record<string, unknown>
  /** Whether the user is active. */
  active: boolean
  /** ISO 8601 creation time. */
  created_at: string
  /** ISO 8601 time of last activity (moved by token issuance). */
  last_seen_at: string
}

/**
 * A customer user as seeded into the fake: the listed fields plus an optional
 * internal `updated_at` (the update endpoint returns it; the list does not).
 * When omitted, `updated_at` starts equal to `created_at`.
 */
export type CustomerUserSeed = CustomerUserRecord & { updated_at?: string | undefined }

/** A customer user as held by the fake: always has the internal `updated_at`. */
export type StoredCustomerUser = CustomerUserRecord & { updated_at: string }

/**
 * The exact response of `PUT /rest/v1/customer-users/:id` (spec endpoint 3):
 * id, external_id, name, email, metadata, active, updated_at.
 */
export type UpdatedCustomerUserRecord = Omit<CustomerUserRecord, 'created_at' | 'last_seen_at'> & {
  /** ISO 8601 time of this update. */
  updated_at: string
}

/** An agent (spec: "Agent"). Timestamps are ISO 8601 strings. */
export interface AgentRecord {
  /** Unique agent id. */
  id: string
  /** Display name. */
  name: string
  /** Agents may be inactive; the list returns them too (spec endpoint 4). */
  active: boolean
  /** ISO 8601 creation time. */
  created_at: string
  /** ISO 8601 time of the last update. */
  updated_at: string
}

/** A conversation (spec: "Conversation"). Timestamps are ISO 8601 strings. */
export interface ConversationRecord {
  /** Unique conversation id. */
  id: string
  /** Conversation title. */
  title: string
  /** Internal id of the customer user. */
  customer_user_id: string
  /** Number of messages; see {@link ConversationSeed} for how the fake computes it. */
  message_count: number
  /** ISO 8601 creation time. */
  created_at: string
  /** ISO 8601 time of the last update. */
  updated_at: string
}

/**
 * A conversation as seeded. `message_count` is optional: when the company has
 * at least one message of this conversation, the count of those messages is
 * used and a seeded `message_count` is ignored (single source of truth);
 * otherwise the seeded value (default 0) is reported.
 */
export type ConversationSeed = Omit<ConversationRecord, 'message_count'> & { message_count?: number | undefined }

/** A message (spec: "Message"). */
export interface MessageRecord {
  /** Unique message id. */
  id: string
  /** Message text. */
  content: string
  /** `user` (from the customer user) or `assistant` (from the AI agent). */
  role: 'user' | 'assistant'
  /** Id of the conversation the message belongs to. */
  conversation_id: string
  /** ISO 8601 creation time; messages are listed oldest first. */
  created_at: string
}

/**
 * A message to append with `FakeChatService.appendMessages`: a {@link MessageRecord} whose `id`,
 * `conversation_id` and `created_at` may be omitted, and are then generated.
 */
export interface MessageSeed {
  /**
   * Unique message id (in the company). Default: the next free `msg_fake_000001`, `msg_fake_000002`,
   * … (one counter per fake, restarted by `reset()`; ids in use are skipped).
   */
  id?: string | undefined
  /** Message text. */
  content: string
  /** `user` (from the customer user) or `assistant` (from the AI agent). */
  role: 'user' | 'assistant'
  /** Must be the conversation the message is appended to, when given. */
  conversation_id?: string | undefined
  /**
   * ISO 8601 creation time, e.g. `2024-01-01T00:00:00.000Z`; the message takes its place in list
   * order (created_at, then id), which may be before existing messages (a back-dated message).
   * Default: the `now` option's time, or 1 ms after the conversation's newest message when that
   * is later (so generated messages always come after the existing ones, even with a frozen clock).
   */
  created_at?: string | undefined
}

/** An API key pair of one company (spec: Authentication). */
export interface ApiKeySeed {
  /** API key identifier. */
  keyId: string
  /** API key secret. */
  keySecret: string
}

/** One company's part of a {@link FakeSeed}. */
export interface CompanySeed {
  /** Company id; reported as `user.companyId` by token issuance. */
  id: string
  /** Optional display name (not exposed by any endpoint). */
  name?: string | undefined
  /** Key pairs that authenticate as this company. `keyId`s are unique across companies. */
  keys: ApiKeySeed[]
  /** The company's agents. */
  agents?: AgentRecord[] | undefined
  /** The company's customer users. */
  customerUsers?: CustomerUserSeed[] | undefined
  /** The company's conversations (each `customer_user_id` must be one of its users). */
  conversations?: ConversationSeed[] | undefined
  /**
   * Messages; each must belong to a conversation of the same company (seeded in
   * the same or an earlier call). The fake keeps references to these objects
   * (no copy, to stay compact with millions of messages): do not mutate them.
   */
  messages?: MessageRecord[] | undefined
}

/**
 * Data to load into the fake: companies, each with its keys and records.
 * Produced by `generateDataset()` (chat-service-sdk/testing) or written by hand.
 */
export interface FakeSeed {
  /** The companies, each with its API keys and records. */
  companies: CompanySeed[]
}

/**
 * How a listening fake compresses response bodies (the `compression` option, and
 * `chat-service-fake --compression`): the request's `accept-encoding` is negotiated (q-values,
 * `*`, `identity`) among the codings offered, and bodies of at least `compressionMinBytes` are
 * compressed with the one chosen (`content-encoding`; every non-empty body gets
 * `vary: accept-encoding`). A body whose `content-encoding` a fault set is sent as it is.
 *
 * - `true` (default): gzip and br offered, br preferred when the client takes both;
 * - `'gzip'` or `'br'`: only that coding offered (a client that does not take it gets the body as it is);
 * - `false` or `'off'`: never compressed, no `vary` (for benchmarks that measure a client, not zlib).
 */
export type FakeCompression = boolean | 'off' | 'gzip' | 'br'

/** Options of `FakeChatService.listen`. */
export interface FakeListenOptions {
  /** TCP port; default 0, a free port. */
  port?: number | undefined
  /** Address to listen on; default `127.0.0.1` (`0.0.0.0` serves other hosts; the control endpoints still answer loopback peers only). */
  host?: string | undefined
  /** This server's compression; default the fake's `compression` option. See {@link FakeCompression}. */
  compression?: FakeCompression | undefined
  /** This server's compression threshold in bytes; default the fake's `compressionMinBytes` option (1,024). */
  compressionMinBytes?: number | undefined
}

/** How the customer-user `name` and `email` filters match (spec: "not shown"). */
export type FilterMatch = 'exact' | 'partial'

/**
 * The fake's rate limit per API key pair (`createFakeChatService({ rateLimit })`), of one of the
 * two kinds real services use. TESTING.md, "Rate limits", has the whole algorithm.
 *
 * - `'token-bucket'` (default): a bucket of `burst` tokens per key pair, refilled continuously at
 *   `requestsPerSecond`; a request that finds less than one token gets 429 and takes nothing.
 * - `'fixed-window'`: at most `requestsPerSecond × windowMs / 1000` requests (rounded down, at
 *   least 1) per key pair in each window of `windowMs`, windows aligned to the epoch (a window of
 *   1,000 ms starts at each whole second); the rest of a window gets 429.
 *
 * `retryAfter` says how a 429 tells the wait: `'seconds'` (default; `Retry-After` in whole
 * seconds, rounded up, at least 1), `'milliseconds'` (`retry-after-ms`, as some services send),
 * or `'none'` (no header at all, as many limiters do).
 */
export interface RateLimitOptions {
  /** `'token-bucket'` (default) or `'fixed-window'`. */
  algorithm?: 'token-bucket' | 'fixed-window' | undefined
  /** The rate allowed per key pair, requests per second (a finite number above 0; fractions allowed, e.g. 0.5). */
  requestsPerSecond: number
  /** Token bucket: the bucket's size, the requests a key pair may send at once after a quiet spell. Default `ceil(requestsPerSecond)` (at least 1). */
  burst?: number | undefined
  /** Fixed window: the window's length in ms (an integer from 1 to 3,600,000; default 1,000). */
  windowMs?: number | undefined
  /** How a 429 tells the wait: `'seconds'` (default), `'milliseconds'` or `'none'`. */
  retryAfter?: 'seconds' | 'milliseconds' | 'none' | undefined
  /**
   * Limits of single endpoints within the key pair's, as services limit token issuance (logins)
   * on its own: keyed by the endpoint as the spec writes it (`'POST /rest/v1/auth/token'`), each
   * the same options as the key pair's but `endpoints`. A request of a listed endpoint takes its
   * share of that endpoint's bucket or window (per key pair) first, and of the key pair's only if
   * that one let it through; a 429 of an endpoint's own limit names the endpoint in its message.
   * An endpoint the spec does not have (a path parameter is written `:id`) is refused with a
   * RangeError that lists those it has.
   * Default: none. TESTING.md, "Rate limits".
   */
  endpoints?: { readonly [endpoint: `${'GET' | 'POST' | 'PUT'} /rest/v1/${string}`]: Omit<RateLimitOptions, 'endpoints'> } | undefined
}

/** Options of `createFakeChatService`. */
export interface FakeChatServiceOptions {
  /** Initial data; `reset()` returns to it. */
  seed?: FakeSeed | undefined
  /**
   * How the `name` and `email` filters of `GET /rest/v1/customer-users` match.
   * `'exact'` (default): case-sensitive string equality. `'partial'`:
   * case-insensitive substring. `external_id` always matches exactly.
   */
  filterMatch?: FilterMatch | undefined
  /** HMAC-SHA256 key for chat tokens. Default: 32 random bytes per instance. */
  tokenSecret?: string | undefined
  /** Clock for timestamps and token `iat`/`exp`/expiry checks. Default `() => new Date()`. */
  now?: (() => Date) | undefined
  /** Fixed delay in ms added before every response (both modes). Default 0. */
  latencyMs?: number | undefined
  /**
   * Whether to record requests in `requests`: `true` (default) keeps every one, `false` none
   * (long benchmarks: memory does not grow with each request), a number `n` the latest `n`
   * (older ones are dropped, oldest first; `npx chat-service-fake` keeps 10,000).
   */
  recordRequests?: boolean | number | undefined
  /**
   * Listen mode: how response bodies are compressed, as a real server does it (see
   * {@link FakeCompression}; TESTING.md, "Compression"). Default `true`: gzip or br, as the
   * request's `accept-encoding` asks, for bodies of at least `compressionMinBytes`. `listen()`
   * may override it per server. msw mode never compresses.
   */
  compression?: FakeCompression | undefined
  /**
   * Listen mode: bodies smaller than this many bytes are sent uncompressed, whatever the request
   * accepts (they still get `vary: accept-encoding`). Default 1,024 (1 KiB): with its headers such
   * a response fits one TCP segment (1,460 bytes on Ethernet) compressed or not, so compressing it
   * saves no packet and no round trip, only CPU at both ends; real servers skip them the same way
   * (nginx's `gzip_min_length`, CloudFront's 1,000-byte floor). 0 compresses every non-empty body
   * (to see decoding on every response, a token's and an error's included). An integer of at
   * least 0. `listen()` may override it per server.
   */
  compressionMinBytes?: number | undefined
  /**
   * Rate-limit every key pair (both modes): 429 (with `Retry-After`, unless told otherwise) past
   * a token bucket's or a fixed window's limit. Default: no limit. See {@link RateLimitOptions}.
   */
  rateLimit?: RateLimitOptions | undefined
  /**
   * The service's deprecation notice, on every response of the API (both modes, errors
   * included; not the control endpoints): as a gateway retiring `/rest/v1` would send it. Default:
   * none. `setDeprecation` changes it; one response only: a fault's `headers`. See
   * {@link DeprecationHeaders}.
   */
  deprecation?: DeprecationHeaders | undefined
}

/**
 * The headers of a deprecation notice, each sent as given (none is checked, so that tests can
 * send odd values too); an absent one is not sent.
 */
export interface DeprecationHeaders {
  /** `Deprecation` (RFC 9745): a structured-field date, `@` and seconds since the epoch, e.g. `'@1688169599'`. */
  deprecation?: string | undefined
  /** `Sunset` (RFC 8594): an HTTP date, e.g. `'Sun, 31 Jan 2027 23:59:59 GMT'`. */
  sunset?: string | undefined
  /** `Link` (RFC 8288), e.g. `'<https://docs.example.com/migrate>; rel="deprecation"'`. */
  link?: string | undefined
}

/**
 * A fault to inject instead of (or on top of) the normal response; see
 * `FakeChatService.failNext`. With neither `status` nor `body`, delays and
 * drops apply to the normal response. Examples: `{ status: 503 }`,
 * `{ status: 429, headers: { 'retry-after': '1' } }`, `{ delayMs: 200 }`,
 * `{ dropConnection: 'mid-body' }`.
 */
export interface FaultSpec {
  /**
   * Status of a synthetic response that replaces normal handling (the request
   * is not processed, state does not change); 200-599, default 500 when only
   * `body` is given. A status of 400 or more without `body` gets the fake's
   * error body `{ "error": { "status", "message" } }`, a lower one an empty body.
   */
  status?: number | undefined
  /** Headers added to the response (synthetic or normal), overriding its own. */
  headers?: Record<string, string> | undefined
  /**
   * Body of a synthetic response: an object is sent as JSON
   * (`application/json; charset=utf-8`), a string as `text/plain; charset=utf-8`,
   * a Buffer as `application/octet-stream` (override with `headers['content-type']`).
   */
  body?: string | Buffer | object | undefined
  /** Wait before sending the headers, in ms ("slow headers"). */
  delayMs?: number | undefined
  /**
   * Send the headers and the first half of the body, wait this many ms, then
   * send the rest ("slow body"); `content-length` is the full length.
   */
  bodyDelayMs?: number | undefined
  /**
   * `'before-headers'` resets the socket before any response byte (the request
   * is recorded but not processed); `'mid-body'` sends the headers (full
   * `content-length`) and the first half of the body, then destroys the socket
   * (the request IS processed, e.g. an update is applied).
   */
  dropConnection?: 'before-headers' | 'mid-body' | undefined
  /**
   * Only requests with this method (case-insensitive) and pathname (as
   * received, not decoded; a string must be equal, a RegExp must match)
   * consume the fault. Default: any request.
   */
  match?: { method?: string | undefined; path?: string | RegExp | undefined } | undefined
}

/** A list of the service that {@link ListMove} can move while it is read (spec endpoints 2, 4, 5 and 6). */
export type MovableList = 'customerUsers' | 'agents' | 'conversations' | 'messages'

/**
 * Where a {@link ListMove} deletes or inserts records, in the list's order (`created_at`, then
 * `id`): `'front'` (before the first), `'end'` (after the last), `'random'` (a position drawn from
 * the move's seeded generator, one per record), or an index (0-based; past the end means the end).
 */
export type ListPosition = 'front' | 'end' | 'random' | number

/** One side of a {@link ListMove}: how many records, and where. */
export interface ListMoveChange {
  /** Where, in list order; see {@link ListPosition}. */
  at: ListPosition
  /** How many records (an integer from 1 to 10,000; default 1), one after the other. */
  count?: number | undefined
}

/**
 * A change the fake makes to a list while a client reads it, to test that a listing misses
 * nothing when the data moves under it (page-number paging shifts every record after a record
 * deleted or inserted before it). Each time the move fires it first deletes, then inserts, then the
 * request that fired it is answered from the changed list. Both at once (`delete` at the front,
 * `insert` at the end) change the list without changing its `total`.
 *
 * Records inserted are generated: conversations `conv_fake_000001`, … (no messages), customer
 * users `cu_fake_000001`, … (`external_id` `ext_fake_…`), agents `agent_fake_000001`, …, messages
 * `msg_fake_000001`, … (a message inserted before others is back-dated, as a `MessageSeed` with an
 * earlier `created_at` is). Their `created_at` puts them where asked (1 s before the first record
 * at the front, the `now` option's time or 1 ms after the last at the end). Deleting a
 * conversation deletes its messages; a message inserted or deleted moves its conversation's
 * `message_count` and `updated_at`, as `appendMessages` and `deleteMessage` do.
 *
 * ```ts
 * fake.moveList({ list: 'conversations', when: { page: 2 }, delete: { at: 'front', count: 3 } })
 * fake.moveList({ list: 'customerUsers', when: { every: 3 }, delete: { at: 'random' }, insert: { at: 'end' } })
 * ```
 */
export interface ListMove {
  /** The list to move. */
  list: MovableList
  /**
   * When the move fires, before the request is answered: `{ page: p }` when page `p` of the list
   * is asked for, `{ every: k }` on every k-th request of the list (the k-th, 2k-th, … since the
   * move was added). Only requests the list endpoint answers with a page count (not a 400, 401 or 404).
   */
  when: { page: number } | { every: number }
  /** Records to delete (before inserting); none when omitted. */
  delete?: ListMoveChange | undefined
  /** Records to insert (after deleting); none when omitted. */
  insert?: ListMoveChange | undefined
  /** How many times the move fires (an integer of at least 1): default 1 for `{ page }`, no limit for `{ every }`. */
  times?: number | undefined
  /** Only this company's list (default: the list of whichever company's key asks for it). */
  companyId?: string | undefined
  /** `'messages'` only: only this conversation's messages (default: whichever conversation's are asked for). */
  conversationId?: string | undefined
  /** Seed of the generator behind `'random'` positions (default 1): the same seed moves the same records. */
  seed?: number | undefined
}

/** What `FakeChatService.moveList` returns: how often the move fired, and a way to stop it. */
export interface ListMoveHandle {
  /** Times the move has fired so far. */
  readonly fired: number
  /** Removes the move: it fires no more. */
  cancel(): void
}

/**
 * One request as the fake received it. This is the only place the fake
 * exposes key secrets (inside `body` / `rawBody`).
 */
export interface RecordedRequest {
  /** Upper-case HTTP method. */
  method: string
  /** Pathname as received, NOT percent-decoded (msw mode: as normalised by WHATWG URL). */
  path: string
  /** Full request target: pathname plus `?query` if any. */
  rawPath: string
  /** Query parameters (decoded; first value wins when repeated). */
  query: Record<string, string>
  /** Lower-case header names; repeated headers joined with `, `. */
  headers: Record<string, string>
  /** Parsed JSON body, or the raw text when it is not JSON, or `undefined` when there is none or it was invisible. */
  body: unknown
  /** The body text as received; `undefined` when empty or invisible. */
  rawBody: string | undefined
  /** `false` only in msw mode for GET/HEAD, whose body a fetch `Request` cannot carry. */
  bodyVisible: boolean
  /** Wall-clock receive time, ms since the epoch (`Date.now()`, not the `now` option). */
  time: number
  /**
   * The id the fake gave this request, sent back as the response's `x-request-id` (unless a
   * fault's `headers` replaced it): matches `response.requestId` and the `requestId` of the SDK's
   * errors. Also set for a request whose connection a fault dropped before any response byte.
   */
  requestId: string
  /**
   * The status the fake answered with (set once the request is handled, so a log read after the
   * response is complete): e.g. count `429`s under `rateLimit`. `undefined` while the request is
   * handled and when a fault dropped the connection before any response byte.
   */
  status: number | undefined
}

/** Claims of a chat token issued by the fake (times in seconds since the epoch). */
export interface TokenClaims {
  /** Internal customer user id. */
  sub: string
  /** The `userId` the token was issued for. */
  external_id: string
  /** Company of the key pair that issued it. */
  company_id: string
  /** Bound agent id, or `null` when `agentId` was omitted. */
  agent_id: string | null
  /** Issued at, seconds. */
  iat: number
  /** Expires at, seconds. */
  exp: number
}

/** Result of `FakeChatService.verifyToken`. */
export type VerifyTokenResult = { valid: true; claims: TokenClaims } | { valid: false; reason: 'malformed' | 'bad-signature' | 'expired' }

/**
 * What a client needs to reach a fake server: `new ChatServiceClient(server.clientOptions())`.
 * Contains a key secret (the fake's, from its seed).
 */
export interface FakeClientOptions {
  /** The server's origin, e.g. `http://127.0.0.1:41234`. */
  baseUrl: string
  /** API key identifier. */
  keyId: string
  /** API key secret. */
  keySecret: string
}

/** A server started by `FakeChatService.listen`. */
export interface FakeServerHandle {
  /** Origin of the server, e.g. `http://127.0.0.1:41234` (no path, no trailing slash). */
  url: string
  /**
   * `{ baseUrl, keyId, keySecret }` for the first company's first key (in seeding order, read at
   * each call), so that a test builds a client in one line:
   * `new ChatServiceClient(server.clientOptions())`.
   * @throws Error when the fake has no company, or its first company has no key.
   */
  clientOptions(): FakeClientOptions
  /** Stops the server and destroys every open (keep-alive) socket. */
  close(): Promise<void>
  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>
}
