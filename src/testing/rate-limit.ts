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

/** One limiter's state for one key pair. */
interface Bucket {
  /** Token bucket: tokens left; fixed window: requests left in the window. */
  tokens: number
  /** Token bucket: `Date.now()` of the last refill; fixed window: the start of the window. */
  at: number
}

/** The headers of a 429, or `undefined` when the request may go on. */
export type Refusal = Readonly<Record<string, string>> | undefined

/** The rate limit of one fake: a bucket or a window per key pair. */
export class RateLimiter {
  readonly #rate: number
  readonly #burst: number
  readonly #windowMs: number | undefined
  readonly #retryAfter: 'seconds' | 'milliseconds' | 'none'
  readonly #buckets = new Map<string, Bucket>()

  /**
   * @throws RangeError when `requestsPerSecond` is not a finite number above 0, `burst` not an
   * integer of at least 1, `windowMs` not an integer from 1 to 3,600,000, or `algorithm` or
   * `retryAfter` unknown.
   */
  constructor(options: RateLimitOptions) {
    const given = options as Partial<RateLimitOptions> | undefined
    const rate = given?.requestsPerSecond
    if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0) {
      throw new RangeError('chat-service-sdk/testing: rateLimit.requestsPerSecond must be a finite number > 0')
    }
    // Checked at run time too: a JavaScript caller (or a JSON config) can pass anything.
    const algorithm: unknown = given?.algorithm ?? 'token-bucket'
    if (algorithm !== 'token-bucket' && algorithm !== 'fixed-window') {
      throw new RangeError("chat-service-sdk/testing: rateLimit.algorithm must be 'token-bucket' or 'fixed-window'")
    }
    const retryAfter: unknown = given?.retryAfter ?? 'seconds'
    if (retryAfter !== 'seconds' && retryAfter !== 'milliseconds' && retryAfter !== 'none') {
      throw new RangeError("chat-service-sdk/testing: rateLimit.retryAfter must be 'seconds', 'milliseconds' or 'none'")
    }
    this.#rate = rate
    this.#retryAfter = retryAfter
    if (algorithm === 'fixed-window') {
      const windowMs = given?.windowMs ?? 1_000
      if (!Number.isSafeInteger(windowMs) || windowMs < 1 || windowMs > 3_600_000) {
        throw new RangeError('chat-service-sdk/testing: rateLimit.windowMs must be an integer from 1 to 3,600,000')
      }
      this.#windowMs = windowMs
      this.#burst = Math.max(1, Math.floor((rate * windowMs) / 1000))
      return
    }
    const burst = given?.burst ?? Math.max(1, Math.ceil(rate))
    if (!Number.isSafeInteger(burst) || burst < 1) throw new RangeError('chat-service-sdk/testing: rateLimit.burst must be an integer >= 1')
    this.#burst = burst
  }

  /** Takes one request's share for `keyId`: `undefined` when it may go on, else the headers of its 429. */
  take(keyId: string, now: number = Date.now()): Refusal {
    const waitMs = this.#windowMs === undefined ? this.#fromBucket(keyId, now) : this.#fromWindow(keyId, now, this.#windowMs)
    if (waitMs === undefined) return undefined
    if (this.#retryAfter === 'none') return {}
    if (this.#retryAfter === 'milliseconds') return { 'retry-after-ms': String(Math.max(1, Math.ceil(waitMs))) }
    return { 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))) }
  }

  /** Forgets every bucket and window (all full again). */
  clear(): void {
    this.#buckets.clear()
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
