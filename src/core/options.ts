// The options of the client and of each call, as users write them, each documented once, in the
// interface of the narrowest place it may be given: a call (`RequestOptions`), `withOptions`
// (`ClientOverrides`, which extends it) or `new ChatServiceClient` (`ClientOptions`, which extends
// that). The option table (src/internal/option-table.ts: schema, default, merge rule, scope) is
// held to these interfaces key by key by the compiler.
import type { Dispatcher } from 'undici'
import type { Logger } from './logger.ts'

/** Default per-attempt timeout: 60,000 ms. */
export const DEFAULT_TIMEOUT_MS = 60_000
/** Default number of retries after the first attempt: 2. */
export const DEFAULT_MAX_RETRIES = 2
/** Default cap on sockets the client's own pool opens to the service: 64. */
export const DEFAULT_CONNECTIONS = 64
/** Default cap on a response body after decoding: 32 MiB (33,554,432 bytes). */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024

/**
 * Where clients in several processes (or machines) share their 429 pause: the `rateLimitStore`
 * option of `new ChatServiceClient`. One value, the moment the pause ends, in **ms since the epoch**
 * (`Date.now()`'s unit); every client given stores that reach the same value (a Redis key, a row)
 * pauses when any of them meets a 429. Both methods may answer synchronously or with a promise.
 *
 * What the SDK calls, and when:
 *
 * - `get()`: before an attempt, at most once every `maxAgeMs` (default
 *   100 ms; 0: before every attempt) per client (and the
 *   clients derived from it), and never while an earlier `get()` is pending.
 *   Attempts made while a read runs wait for it, at most 250 ms
 *   from its start, then go on with what the process knows itself; attempts in between
 *   reads use the last value read, without waiting. A value in the past, or `0`, means no pause.
 * - `set(untilEpochMs)`: when a 429 makes the pause end later than both the process's own pause
 *   and the last value read. Not awaited: calls never wait for it. Several processes may call it
 *   at once; a store that keeps the later of the stored value and `untilEpochMs` never shortens
 *   another process's pause (docs/rate-limits.md has a Redis one).
 *
 * Failures never fail a call: a `get()` or `set()` that throws or rejects, a `get()` slower than
 * 250 ms, and a `get()` value that is not a finite number or lies more than 120 s ahead (twice
 * the longest `Retry-After` the SDK honours, 60 s: not a pause the SDK could have set) are each logged once at `warn`
 * (redacted, through the client's `logger`) and ignored: the client keeps its own pause. No
 * rejection of the store's promises is left unhandled. Clocks of the processes sharing a store
 * must agree (NTP): the value is a moment, not a duration.
 */
export interface RateLimitStore {
  /** When the shared pause ends, ms since the epoch (0 or a past moment: no pause). */
  get(): number | Promise<number>
  /** Records that the shared pause ends at `untilEpochMs` (ms since the epoch); ideally keeps the later of it and the stored value. */
  set(untilEpochMs: number): void | Promise<void>
  /**
   * How old the value last read may be before an attempt reads it again, in ms (0 to 60,000; default
   * 100). `0` reads it before every attempt (one read at a time:
   * attempts that meet a read running share it): a 429 one process meets then stops the others'
   * next requests, at the cost of one store round trip per request (about 0.1 to 0.3 ms for Redis
   * on the same network). Workers that all push against the limit find it themselves within one
   * round trip, faster than a 100 ms read would tell them; with `0` they learn it from the store first.
   */
  readonly maxAgeMs?: number | undefined
  /**
   * Optional (added in 0.4): shares the client's learned send rate and its budget with the other
   * processes of the store, so that N workers of one company together send at one rate instead of
   * each at its own (see `pacing`). A store without it keeps working: the 429 pause is shared, and
   * each process paces on its own.
   *
   * The store keeps a token bucket and one `RateLimitStore.LearnedRate`, and does this atomically (one
   * Redis Lua script, one round trip):
   *
   * 1. If `request.learned` is given and newer (`at`) than the stored one (or none is stored), it
   *    replaces it.
   * 2. If `request.tokens` is more than 0: the bucket (full at first: `burst` tokens) refills at
   *    `request.ratePerSecond` tokens a second since its last update, up to `request.burst`; then
   *    grants `min(tokens, floor(bucket − reserve))` tokens (never fewer than 0) and takes them out.
   *    With `tokens: 0` the bucket is not touched.
   * 3. Answers the tokens granted and the stored learned rate (`null` when none).
   * 4. Optionally (a store that skips it keeps working): adds `request.accepted` to a count of the
   *    requests accepted per second of its own clock, on every call (`tokens: 0` ones too: most
   *    counts come through them, before any process paces), and answers `acceptedPerSecond`, the
   *    count over about the last second (this second's count plus the last second's, weighted by
   *    the share of it still inside the last 1,000 ms). A process that meets its first 429 starts
   *    its estimate of the limit from this sum of all processes (when it is at most 1 s old and
   *    larger than its own share). Count no more than was told: too high a sum makes the first
   *    estimate too high (more 429s), too low a sum only makes it the process's own. An
   *    `acceptedPerSecond` that is not a number of 0 or more makes the whole answer a failed
   *    `take`, like any other answer that is not a `RateLimitGrant`.
   *
   * When the SDK calls it: while the client paces, for the requests waiting when its leased tokens
   * run out (at most a tenth of a second's worth at a time, one call at a time); while it does not,
   * with `tokens: 0` at the same cadence as `get()`, to learn that another process started pacing.
   * Calls a person waits on (`priority: 'interactive'`) ask with `reserve: 0`; batch traffic leaves
   * a tenth of a second's worth of tokens for them. A `take` that throws, rejects, answers
   * something that is not a `RateLimitGrant` (a learned rate whose `at` lies over 120 s ahead of
   * the process's clock included: no SDK sets one), or takes over 250 ms is logged once at `warn`;
   * the process then paces on its own and tries the store again 5 s later. Never a failed call.
   */
  take?(request: RateLimitTake): RateLimitGrant | Promise<RateLimitGrant>
}

/**
 * The send rate a client learned from a 429 (see `pacing`), as shared through
 * `RateLimitStore.take`. Every process computes the rate from it the same way, so only this
 * needs sharing. Store it as given, and keep it for a week: a process that reads one over 5
 * minutes old does not pace by it, but its first 429 climbs from its `max` (up to a week after
 * `at`) instead of probing for the limit again (docs/rate-limits.md, "How the rate is learned").
 */
export interface LearnedRate {
  /** Requests per second the service accepted when the rate was last lowered. */
  readonly max: number
  /**
   * When the climb back from the lowered rate starts, ms since the epoch: when it was lowered, or
   * the end of the wait (`Retry-After`) the 429 that lowered it asked for. A newer `at` wins.
   */
  readonly at: number
  /** How long the rate takes to climb back to `max`, ms (0: still probing upwards from a first estimate). */
  readonly recoveryMs: number
}

/** What `RateLimitStore.take` is asked. */
export interface RateLimitTake {
  /** Tokens wanted: a whole number from 0 (only exchange `learned`) to 10,000. */
  readonly tokens: number
  /** Tokens the bucket must still hold after this take (0 for calls a person waits on). */
  readonly reserve: number
  /** The rate the bucket refills at, tokens (requests) per second. */
  readonly ratePerSecond: number
  /** Most tokens the bucket holds. */
  readonly burst: number
  /** A rate this client learned, to record if it is newer than the stored one. */
  readonly learned?: LearnedRate | undefined
  /** Requests this client had accepted (answered with anything but 429) since its last `take`: a whole number, 0 or more. */
  readonly accepted: number
}

/** What `RateLimitStore.take` answers. */
export interface RateLimitGrant {
  /** Tokens granted: a whole number from 0 to the tokens asked. */
  readonly tokens: number
  /** The stored learned rate after this take; `null` or absent when none is stored. */
  readonly learned?: LearnedRate | null | undefined
  /**
   * Requests per second all processes of the store accepted over about the last second (step 4 of
   * `take`): a number, 0 or more; absent or `null` when the store does not count them.
   */
  readonly acceptedPerSecond?: number | null | undefined
}

/**
 * The types of `RateLimitStore.take`: `RateLimitStore.Take` (what it is asked),
 * `RateLimitStore.Grant` (what it answers) and `RateLimitStore.LearnedRate` (the rate they carry).
 */
// eslint-disable-next-line @typescript-eslint/no-namespace -- a declaration only: the types of one method, under its interface's name
export declare namespace RateLimitStore {
  export { LearnedRate, RateLimitTake as Take, RateLimitGrant as Grant }
}

/** Least time between two reads (`get()`) of a `RateLimitStore` by one client, in ms: 100. */
export const RATE_LIMIT_STORE_REFRESH_MS = 100
/** Longest an attempt waits for a `RateLimitStore`'s `get()`, in ms from the read's start: 250. */
export const RATE_LIMIT_STORE_GET_TIMEOUT_MS = 250

/**
 * Options every method takes as its last argument, for that call. Each one but `signal` may also be
 * set on the client (`new ChatServiceClient`) and on `withOptions`, as the default of every call
 * made through that client; a call's value wins over the client's.
 */
export interface RequestOptions {
  /**
   * Aborts the call, during a request, a retry wait or the wait for the client's 429 pause; the call
   * rejects with `APIUserAbortError`, whose `cause` is the signal's `reason`. Per call only.
   */
  signal?: AbortSignal | undefined
  /**
   * Deadline of each attempt's exchange in ms (default 60,000; 1 to 2,147,483,647), counted from
   * the moment the request is handed to a connection to the last body byte. The wait for that
   * connection (a free pooled one, or a new one; the pool's connect timeout is the client's
   * `timeout` too) is bounded separately by the same number: an attempt that times out there was
   * never sent, and says so. So an attempt that waited for a connection may take up to twice
   * `timeout` (`totalTimeout` bounds the whole call), and a request that waited in a busy pool is
   * never sent with little time left, abandoned after the server has it, and sent again.
   */
  timeout?: number | undefined
  /**
   * Retries after the first attempt for retryable failures (default 2; 0 disables, e.g. for token
   * issuance if you prefer; at most 100).
   */
  maxRetries?: number | undefined
  /**
   * Deadline of a whole call in ms (1 to 2,147,483,647; default none): every attempt, the waits
   * between them (backoff, `Retry-After`) and the wait for the client's 429 pause. A wait that
   * cannot end before the deadline is not started; each attempt's own deadline is cut to what is
   * left. When it runs out the call rejects with `APITimeoutError` whose `cause` is the error of the
   * last attempt that ended, if one did. A list's `totalTimeout` bounds each page's request, not
   * the iteration (stop an iteration with `signal`).
   */
  totalTimeout?: number | undefined
  /**
   * What a call does while the client is paused after a 429 (default `'wait'`): `'wait'` waits the
   * pause out (within `totalTimeout`, if set, and for at most 60,000 ms per try, `maxRetries + 1`
   * tries, in all: a pause that other 429s or a `rateLimitStore` keep making longer rejects the call
   * with `RateLimitError` once waiting more would pass that); `'fail'` rejects at once, sending
   * nothing, with the `RateLimitError` of the 429 that started the pause, `retryAfterMs` being what
   * is left of it (for a login path that would rather answer "busy" than wait). Under `'fail'`, a
   * 429 with `Retry-After` judged its operation's own limit (which pauses nothing: docs/rate-limits.md,
   * "A limit on one endpoint alone") rejects its call at once with that 429 too.
   */
  rateLimitPause?: 'wait' | 'fail' | undefined
  /**
   * Which lane of the client's paced rate this call uses (see {@link ClientOptions.pacing}):
   * `'interactive'`, a call a person waits on, takes a reserved share and never queues behind
   * `'batch'` traffic. Default: `'interactive'` for single calls, a list's first page and every
   * page of `findByExternalId`; `'batch'` for later pages of an iteration, prefetched pages,
   * `listAll` and `listNew`.
   * Given on a call, it applies to every request of the call; on a client (`client.withOptions({ priority: 'batch' })` for a background job), to every call of it. Changes nothing while the client is not paced.
   */
  priority?: 'interactive' | 'batch' | undefined
  /**
   * Extra headers for every request. Values are Latin-1 text without control characters. Refused:
   * `content-type`, `content-length`, `host`, `transfer-encoding`, `connection`, `keep-alive`,
   * `upgrade`, `expect`, `te`, `trailer`, `proxy-connection`, `accept` (the service answers JSON),
   * `accept-encoding` (see `compression`). `user-agent` may be replaced. Merged, not replaced:
   * `withOptions`' and a call's headers are added over the client's (names compared
   * case-insensitively).
   */
  headers?: Record<string, string> | undefined
  /**
   * What a response that does not match its schema does (default `'strict'`):
   * `'strict'` throws `ResponseValidationError`; `'warn'` returns it as the service sent it and
   * logs each distinct issue once at `warn` (redacted). A list's `pagination` block is always
   * checked strictly: paging cannot go on without it.
   */
  responseValidation?: 'strict' | 'warn' | undefined
}

/** Options of list methods: {@link RequestOptions} plus page prefetch and the second scan. */
export interface ListRequestOptions extends RequestOptions {
  /**
   * While iterating, how many later pages to keep in flight once the first page has told
   * `total_pages` (default 0: one page at a time; at most 32). Items still come out in page order.
   * Each prefetched page needs a socket: keep it below `connections` (or your dispatcher's), or
   * pages wait for a free socket (up to their `timeout`, then retried).
   */
  prefetch?: number | undefined
  /**
   * While iterating the whole list, scan it a second time once the first scan ends, and yield what
   * the first did not (default false). Iteration sees and repairs every change that moves the
   * list's `total` on its own; a delete before the page being read together with an insert after
   * it keeps `total` and cannot be seen from one scan: the second finds what it moved past. It
   * costs one more request per page (BENCHMARKS.md, "Lists that move").
   */
  rescan?: boolean | undefined
}

/**
 * What `client.withOptions(overrides)` may change: every default of how calls are made (the options
 * of {@link RequestOptions} but `signal`, and the ones below). The service, the key pair, the
 * connection pool and the 429 pause stay the parent's.
 */
export interface ClientOverrides extends Omit<RequestOptions, 'signal'> {
  /** Where logs go (default `console`). Any object with `debug`, `info`, `warn`, `error`. */
  logger?: Logger | undefined
  /**
   * Least severe level logged (default `warn`, or the `CHAT_SERVICE_LOG` environment variable):
   * `off` nothing, `error`, `warn`, `info` (each retry), `debug` (every attempt).
   */
  logLevel?: 'off' | 'error' | 'warn' | 'info' | 'debug' | undefined
  /**
   * Largest response body accepted, in bytes after decoding (default 32 MiB); a larger one is cut
   * off with `ResponseValidationError`. An error response keeps its first 64 KiB.
   */
  maxResponseBytes?: number | undefined
  /**
   * Ask for compressed responses (`accept-encoding: gzip, br`) and decode them (default true).
   * `false` asks for none. Not `zstd`: Node's decoder stops after a body's first frame.
   */
  compression?: boolean | undefined
}

/**
 * Options of `new ChatServiceClient(options)`: the ones below, which only `new` takes (the client's
 * service, key pair and connection pool, shared by the clients derived from it), and every option of
 * {@link ClientOverrides} (and so of {@link RequestOptions} but `signal`) as the default of every
 * call. `baseUrl`, `keyId` and `keySecret` fall back to the environment variables
 * `CHAT_SERVICE_BASE_URL`, `CHAT_SERVICE_KEY_ID` and `CHAT_SERVICE_KEY_SECRET`; a value given here
 * wins.
 */
export interface ClientOptions extends ClientOverrides {
  /**
   * Where the service lives: an origin (`https://chat.example.com`) or one ending in `/rest/v1`,
   * with or without a trailing slash, as a string or a `URL`. Requests always go to exactly one
   * `/rest/v1` prefix. `http:` is refused unless the host is loopback or `allowInsecureHttp` is
   * true. Default: the `CHAT_SERVICE_BASE_URL` environment variable.
   */
  baseUrl?: string | URL | undefined
  /** API key identifier (spec, Authentication 1), sent only in the JSON body. Default: `CHAT_SERVICE_KEY_ID`. */
  keyId?: string | undefined
  /**
   * API key secret (spec, Authentication 1), sent only in the JSON body; never logged or shown.
   * Default: `CHAT_SERVICE_KEY_SECRET`.
   */
  keySecret?: string | undefined
  /**
   * Shares the client's 429 pause with clients in other processes through a store you provide
   * (Redis, a database row; see `RateLimitStore` for when it is read and written, and what
   * happens when it fails). Default: none, the pause is this client's (and its derived clients')
   * alone. Set only here: clients made by `withOptions` share their parent's pause, and so its
   * store. An object without callable `get` and `set` is a `RequestValidationError`.
   */
  rateLimitStore?: RateLimitStore | undefined
  /**
   * How the client spends the service's rate limit (default `'adaptive'`). The spec shows no rate
   * limit; services have one, and a 429 says the client met it.
   *
   * - `'adaptive'`: nothing changes until the first 429 (no cost, no wait). From then on the client
   *   sends at a rate it learns: lowered at each 429 to what the service accepted, raised again
   *   while requests succeed, released evenly (after a pause, a twentieth of a second's worth at
   *   once, at least 2 requests); `Retry-After` is a floor (nothing is sent before it), and a 429
   *   without one lowers the rate as well. Calls a person waits on (`priority: 'interactive'`) keep
   *   a reserved share of the rate, so an export never makes a login call queue behind it. A 429 is
   *   then not a failure while the service lets requests through: the call is sent again when the
   *   rate allows (and no sooner than its 429's `Retry-After`, or without one its own backoff,
   *   100 ms doubling to 8 s over its 429s in a row), without counting against `maxRetries`, until
   *   the service has accepted no request of its operation for 60,000 ms or asks for a
   *   `Retry-After` over 60 s (then `RateLimitError`), `totalTimeout` runs out (`APITimeoutError`)
   *   or `signal` aborts. With a `rateLimitStore` that has `take`, the learned rate and its budget
   *   are shared by every process of the store. `client.pacedRate` shows the rate; pacing ends
   *   after 5 minutes without a 429.
   * - `'off'`: 0.3's behaviour: a 429 pauses the client for its `Retry-After` (else the backoff)
   *   and counts as a retry like a 503.
   *
   * Set only here: clients made by `withOptions` share their parent's rate.
   */
  pacing?: 'adaptive' | 'off' | undefined
  /**
   * An undici (7 or later) `Dispatcher` to send requests through (a proxy `ProxyAgent`, a
   * `MockAgent`, a custom `Pool`). The caller owns it: `client.close()` does not close it.
   * Default: a keep-alive HTTP/1.1 `Agent` owned by the client. An HTTP/2 dispatcher
   * (`allowH2: true`) is yours to vouch for: see docs/reliability.md, "HTTP/2".
   */
  dispatcher?: Dispatcher | undefined
  /** Most sockets the client's own pool opens to the service (default 64; 1 to 65,536). Ignored with `dispatcher`. */
  connections?: number | undefined
  /** Allow an `http:` baseUrl on a non-loopback host (default false): the key secret would cross the network in clear text. */
  allowInsecureHttp?: boolean | undefined
  /**
   * Allow construction in a browser, web worker, edge runtime or Electron renderer (default false):
   * the key secret belongs on servers only (spec, Authentication 4). Node.js with a DOM shim
   * (vitest's happy-dom or jsdom) needs no option; Bun is refused whatever this says.
   */
  dangerouslyAllowBrowser?: boolean | undefined
}
