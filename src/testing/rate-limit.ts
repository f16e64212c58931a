/**
 * The fake's rate limit (`createFakeChatService({ rateLimit })`): a token bucket (default) or a
 * fixed window per API key pair. The spec shows no rate limit ("Rate limits ...: not shown"); this
 * is the fake's, so that a client's handling of 429 (retries, Retry-After, pacing) can be tested
 * against the kinds of limiters real services use.
 *
 * The token bucket, whole (TESTING.md repeats it for users):
 * - each key pair (`keyId`) has a bucket of `burst` tokens, full at first;
 * - it refills continuously at `requestsPerSecond` tokens a second, never above `burst`;
 * - a request that counts takes one token; with less than one token left it is refused with 429
 *   and `Retry-After`: the seconds until a token is back, rounded up (at least 1). A refused
 *   request takes nothing, so a client that keeps asking while refused does not push its own
 *   wait further out.
 *
 * The fixed window: windows of `windowMs` aligned to the epoch; each key pair may send
 * `floor(requestsPerSecond × windowMs / 1000)` (at least 1) requests per window; the rest of the
 * window is refused with 429 and `Retry-After`: the seconds until the window ends, rounded up (at
 * least 1). Either way, `retryAfter: 'milliseconds'` sends `retry-after-ms` (the exact wait)
 * instead, and `'none'` no header at all.
 *
 * A limit of one endpoint (`endpoints`, keyed by the endpoint as the spec writes it) is a limiter of
 * the same kinds, per key pair, taken before the key pair's: a request it refuses takes nothing of
 * the key pair's, and its 429 names the endpoint.
 *
 * What counts, for both:
 * - a request counts once its credentials are valid (after routing, body and credentials checks,
 *   before the endpoint's own), whatever the endpoint then answers. Requests that fail before
 *   that (404 or 405 route, 400 malformed body, 401) take no token: without valid credentials
 *   there is no key pair to charge, and charging the `keyId` of a wrong secret would let anyone
 *   exhaust another's budget. Requests answered by a synthetic fault never reach the service.
 *
 * Time is the wall clock (`Date.now()`), not the fake's `now` option, which tests often freeze: a
 * frozen clock would never refill. Timer mocks that move `Date.now()` move the bucket too.
 *
 * @module
 */
import type { RateLimitOptions } from './types.ts'

/** An endpoint as the spec writes it (`'POST /rest/v1/auth/token'`): the key of `rateLimit.endpoints`. */
export type EndpointName = keyof NonNullable<RateLimitOptions['endpoints']>

/** One limiter's state for one key pair. */
interface Bucket {
  /** Token bucket: tokens left; fixed window: requests left in the window. */
  tokens: number
  /** Token bucket: `Date.now()` of the last refill; fixed window: the start of the window. */
  at: number
}

/** The headers of a 429, or `undefined` when the request may go on. */
export type Refusal = Readonly<Record<string, string>> | undefined

/** A request refused: the headers of its 429, and the endpoint whose own limit refused it (`undefined`: the key pair's). */
export interface RefusedBy {
  readonly headers: Readonly<Record<string, string>>
  readonly endpoint: EndpointName | undefined
}

/** The rate limit of one fake: a bucket or a window per key pair. */
export class RateLimiter {
  readonly #rate: number
  readonly #burst: number
  readonly #windowMs: number | undefined
  readonly #retryAfter: 'seconds' | 'milliseconds' | 'none'
  readonly #buckets = new Map<string, Bucket>()
  /** The limits of single endpoints (`endpoints`), each a limiter of its own. */
  readonly #endpoints = new Map<string, RateLimiter>()

  /**
   * `known`: the endpoints a limit of `endpoints` may name.
   * @throws RangeError when `requestsPerSecond` is not a finite number above 0, `burst` not an
   * integer of at least 1, `windowMs` not an integer from 1 to 3,600,000, `algorithm` or
   * `retryAfter` unknown (for the key pair's limit or an endpoint's), or `endpoints` names an
   * endpoint that is not in `known`.
   */
  constructor(options: RateLimitOptions, known: readonly EndpointName[] = [], field = 'rateLimit') {
    const given = options as Partial<RateLimitOptions> | undefined
    const rate = given?.requestsPerSecond
    if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0) {
      throw new RangeError(`chat-service-sdk/testing: ${field}.requestsPerSecond must be a finite number > 0`)
    }
    // Checked at run time too: a JavaScript caller (or a JSON config) can pass anything.
    const algorithm: unknown = given?.algorithm ?? 'token-bucket'
    if (algorithm !== 'token-bucket' && algorithm !== 'fixed-window') {
      throw new RangeError(`chat-service-sdk/testing: ${field}.algorithm must be 'token-bucket' or 'fixed-window'`)
    }
    const retryAfter: unknown = given?.retryAfter ?? 'seconds'
    if (retryAfter !== 'seconds' && retryAfter !== 'milliseconds' && retryAfter !== 'none') {
      throw new RangeError(`chat-service-sdk/testing: ${field}.retryAfter must be 'seconds', 'milliseconds' or 'none'`)
    }
    this.#rate = rate
    this.#retryAfter = retryAfter
    const endpoints: unknown = given?.endpoints ?? {}
    if (endpoints === null || typeof endpoints !== 'object' || Array.isArray(endpoints))
      throw new RangeError(`chat-service-sdk/testing: ${field}.endpoints must be an object keyed by endpoint (${known.join(', ')})`)
    for (const [name, limit] of Object.entries(endpoints)) {
      if (!(known as readonly string[]).includes(name))
        throw new RangeError(
          `chat-service-sdk/testing: ${field}.endpoints names ${JSON.stringify(name)}, no endpoint of the spec: one of ${known.join(', ')}`,
        )
      if ((limit as Partial<RateLimitOptions> | undefined)?.endpoints !== undefined)
        throw new RangeError(`chat-service-sdk/testing: ${field}.endpoints[${JSON.stringify(name)}] has endpoints of its own`)
      this.#endpoints.set(name, new RateLimiter(limit as RateLimitOptions, [], `${field}.endpoints[${JSON.stringify(name)}]`))
    }
    if (algorithm === 'fixed-window') {
      const windowMs = given?.windowMs ?? 1_000
      if (!Number.isSafeInteger(windowMs) || windowMs < 1 || windowMs > 3_600_000) {
        throw new RangeError(`chat-service-sdk/testing: ${field}.windowMs must be an integer from 1 to 3,600,000`)
      }
      this.#windowMs = windowMs
      this.#burst = Math.max(1, Math.floor((rate * windowMs) / 1000))
      return
    }
    const burst = given?.burst ?? Math.max(1, Math.ceil(rate))
    if (!Number.isSafeInteger(burst) || burst < 1) throw new RangeError(`chat-service-sdk/testing: ${field}.burst must be an integer >= 1`)
    this.#burst = burst
  }

  /**
   * Takes one request's share for `keyId`, of `endpoint`'s own limit first when it has one:
   * `undefined` when it may go on, else the headers of its 429 and whose limit refused it.
   */
  take(keyId: string, endpoint?: EndpointName, now: number = Date.now()): RefusedBy | undefined {
    const limiter = endpoint === undefined ? undefined : this.#endpoints.get(endpoint)
    const own = limiter === undefined ? undefined : limiter.#take(keyId, now)
    if (own !== undefined) return { headers: own, endpoint }
    const headers = this.#take(keyId, now)
    return headers === undefined ? undefined : { headers, endpoint: undefined }
  }

  /** This limiter's share for `keyId`: `undefined` when it may go on, else the headers of its 429. */
  #take(keyId: string, now: number): Refusal {
    const waitMs = this.#windowMs === undefined ? this.#fromBucket(keyId, now) : this.#fromWindow(keyId, now, this.#windowMs)
    if (waitMs === undefined) return undefined
    if (this.#retryAfter === 'none') return {}
    if (this.#retryAfter === 'milliseconds') return { 'retry-after-ms': String(Math.max(1, Math.ceil(waitMs))) }
    return { 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))) }
  }

  /** Forgets every bucket and window (all full again), the endpoints' too. */
  clear(): void {
    this.#buckets.clear()
    for (const limiter of this.#endpoints.values()) limiter.clear()
  }

  /** Token bucket: `undefined` when a token was taken, else the ms until one is back. */
  #fromBucket(keyId: string, now: number): number | undefined {
    let bucket = this.#buckets.get(keyId)
    if (bucket === undefined) {
      bucket = { tokens: this.#burst, at: now }
      this.#buckets.set(keyId, bucket)
    } else {
      // A clock that goes back (a wall clock may) refills nothing rather than draining the bucket.
      const elapsed = Math.max(0, now - bucket.at)
      bucket.tokens = Math.min(this.#burst, bucket.tokens + (elapsed / 1000) * this.#rate)
      bucket.at = Math.max(bucket.at, now)
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return undefined
    }
    return ((1 - bucket.tokens) / this.#rate) * 1000
  }

  /** Fixed window: `undefined` when the window had room, else the ms until it ends. */
  #fromWindow(keyId: string, now: number, windowMs: number): number | undefined {
    const start = Math.floor(now / windowMs) * windowMs
    let window = this.#buckets.get(keyId)
    // A clock that goes back keeps the later window: nothing is handed out twice.
    if (window === undefined || start > window.at) {
      window = { tokens: this.#burst, at: start }
      this.#buckets.set(keyId, window)
    }
    if (window.tokens >= 1) {
      window.tokens -= 1
      return undefined
    }
    return window.at + windowMs - now
  }
}
