/**
 * The client-wide pause after a 429: one per transport, so a client and every client derived from
 * it pause together. While it runs, new attempts wait for it instead of each finding the limit on
 * its own; attempts already in flight go on.
 */
export class RateLimitPause {
  /** Until when (ms since the epoch) new attempts wait; 0 when never paused. */
  #until = 0

  /** What is left of the pause, in ms (0 when not paused). */
  remaining(now: number = Date.now()): number {
    return Math.max(0, this.#until - now)
  }

  /** Pauses new attempts for `ms` from now, unless a pause already runs longer. */
  extend(ms: number, now: number = Date.now()): void {
    this.#until = Math.max(this.#until, now + ms)
  }
}
