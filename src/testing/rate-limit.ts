/**
 * The fake's rate limit (`createFakeChatService({ rateLimit })`): a token bucket per API key pair.
 * The spec shows no rate limit ("Rate limits ...: not shown"); this is the fake's, so that a
 * client's handling of 429 (retries, Retry-After, a client-wide pause) can be tested.
 *
 * The algorithm, whole (TESTING.md repeats it for users):
 * - each key pair (`keyId`) has a bucket of `burst` tokens, full at first;
 * - it refills continuously at `requestsPerSecond` tokens a second, never above `burst`;
 * - a request that counts takes one token; with less than one token left it is refused with 429
 *   and `Retry-After`: the seconds until a token is back, rounded up (at least 1). A refused
 *   request takes nothing, so a client that keeps asking while refused does not push its own
 *   wait further out;
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

interface Bucket {
  tokens: number
  /** `Date.now()` of the last refill. */
  at: number
}

/** The token buckets of one fake. */
export class RateLimiter {
  readonly #rate: number
  readonly #burst: number
  readonly #buckets = new Map<string, Bucket>()

  /** @throws RangeError when `requestsPerSecond` is not a finite number above 0, or `burst` not an integer of at least 1. */
  constructor(options: RateLimitOptions) {
    const rate = (options as Partial<RateLimitOptions> | undefined)?.requestsPerSecond
    if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0) {
      throw new RangeError('chat-service-sdk/testing: rateLimit.requestsPerSecond must be a finite number > 0')
    }
    const burst = options.burst ?? Math.max(1, Math.ceil(rate))
    if (!Number.isSafeInteger(burst) || burst < 1) throw new RangeError('chat-service-sdk/testing: rateLimit.burst must be an integer >= 1')
    this.#rate = rate
    this.#burst = burst
  }

  /**
   * Takes a token for `keyId`: `undefined` when the request may go on, else the whole seconds to
   * send as `Retry-After`.
   */
  take(keyId: string, now: number = Date.now()): number | undefined {
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
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#rate))
  }

  /** Forgets every bucket (all full again). */
  clear(): void {
    this.#buckets.clear()
  }
}
