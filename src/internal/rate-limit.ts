/**
 * The client-wide pause after a 429: one per transport, so a client and every client derived from
 * it pause together. While it runs, new attempts wait for it (or, with `rateLimitPause: 'fail'`,
 * are refused) instead of each finding the limit on its own; attempts already in flight go on.
 */
import type { ReceivedResponse } from './exchange.ts'

export class RateLimitPause {
  /** Until when (ms since the epoch) new attempts wait; 0 when never paused. */
  #until = 0
  /** The 429 that set {@link RateLimitPause.#until}. */
  #response: ReceivedResponse | undefined

  /** What is left of the pause, in ms (0 when not paused). */
  remaining(now: number = Date.now()): number {
    return Math.max(0, this.#until - now)
  }

  /** When the pause ends (ms since the epoch), or `undefined` when not paused. */
  until(now: number = Date.now()): number | undefined {
    return this.#until > now ? this.#until : undefined
  }

  /** The 429 response that started the pause running now (or that last did). */
  get response(): ReceivedResponse | undefined {
    return this.#response
  }

  /** Pauses new attempts for `ms` from now because of `response` (a 429), unless a pause already runs longer. */
  extend(ms: number, response: ReceivedResponse, now: number = Date.now()): void {
    if (now + ms <= this.#until) return
    this.#until = now + ms
    this.#response = response
  }
}
