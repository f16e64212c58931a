/**
 * Sends at a rate, with a lane kept free for the calls a person waits on: a token bucket that
 * refills at the learned rate, two queues of waiting requests (`interactive` first, then `batch`),
 * and a reserve of tokens that batch traffic never takes.
 *
 * - Interactive requests take a token whenever one is there; batch requests only while more than
 *   the reserve ({@link reserveOf}: a tenth of a second's worth, at least one) is left. While no
 *   interactive request comes, the bucket hovers at the reserve and batch traffic still gets the
 *   whole rate; a login call then finds a token at once instead of queueing behind an export.
 * - The bucket holds at most the reserve and a twentieth of a second's worth more, at least 2
 *   ({@link capacityOf}): after a pause (or any idle time), batch requests get that much at once,
 *   then the rate. At low rates that is 2 requests at once at a pause's end, which a limit with no
 *   burst refuses one of. An operation's own pace saves up nothing during a hold its batch
 *   request's 429 made ({@link TokenSource.drain} with `until`, own-pace.ts); the client's bucket
 *   still does: holding those back was tried (27c8b98), and beside bursts of login calls it left
 *   the client paced by one endpoint's limit for good (BENCHMARKS.md, "Pacing: the client's bucket
 *   at a hold's end").
 * - Waiters of one lane go in order; a retried request goes to the front of its lane.
 *
 * Where the tokens come from is a {@link TokenSource}: refilled here at the learned rate, or leased
 * from a store shared with other processes (`shared.ts`).
 */

/** The two lanes: calls a person waits on, and iteration traffic. */
export type Priority = 'interactive' | 'batch'

/** Time, and timers: the global ones (looked up at each use, so fake timers reach them), or a simulation's. */
export interface Clock {
  now(): number
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => {
    clearTimeout(handle as ReturnType<typeof setTimeout>)
  },
}

/** Tokens kept for interactive requests at `rate` requests per second: a tenth of a second's worth, at least 1. */
export function reserveOf(rate: number): number {
  return Math.max(1, rate / 10)
}

/**
 * Most tokens the bucket holds at `rate`: the reserve and a twentieth of a second's worth (at least
 * 2) for batch traffic. Less would lose tokens whenever the event loop is late (a timer that fires
 * 15 ms late at 100 requests/s finds one token, not one and a half); more would let a burst out
 * after a pause.
 */
export function capacityOf(rate: number): number {
  return reserveOf(rate) + Math.max(2, rate / 20)
}

/** Where tokens come from. */
export interface TokenSource {
  /** Takes one token for `priority` if there is one now (a batch request leaves `reserve` tokens). */
  take(priority: Priority, now: number): boolean
  /** When (ms since the epoch) a token for `priority` may be there, as far as is known now. */
  nextAt(priority: Priority, now: number): number
  /**
   * Throws away the tokens there are (after a 429: the service has none for us), and with `until`
   * (ms since the epoch, the end of a hold) those that would come before it: none piles up while
   * the hold lasts.
   */
  drain(now: number, until?: number): void
}

/** A bucket refilled at `rateOf(now)` tokens a second: the process's own pacing. */
export class LocalTokens implements TokenSource {
  #tokens = 0
  #at: number
  readonly #rateOf: (now: number) => number

  constructor(rateOf: (now: number) => number, now: number) {
    this.#rateOf = rateOf
    this.#at = now
  }

  take(priority: Priority, now: number): boolean {
    const rate = this.#refill(now)
    const floor = priority === 'interactive' ? 1 : reserveOf(rate) + 1
    if (this.#tokens < floor) return false
    this.#tokens -= 1
    return true
  }

  nextAt(priority: Priority, now: number): number {
    const rate = this.#refill(now)
    const floor = priority === 'interactive' ? 1 : reserveOf(rate) + 1
    // No rate (an own pace that has ended): whenever it is not drained. An infinite floor less
    // infinite tokens made NaN, and a timer of 1 ms each turn while a hold lasted.
    if (!Number.isFinite(rate)) return this.#at
    // From `#at`, which a drain with `until` may have set after now.
    return this.#at + Math.max(0, ((floor - this.#tokens) * 1000) / rate)
  }

  drain(now: number, until = now): void {
    this.#refill(now)
    this.#tokens = 0
    // Nothing saved up until the end of a hold either: from there, the requests go at the rate.
    this.#at = Math.max(this.#at, until)
  }

  #refill(now: number): number {
    const rate = this.#rateOf(now)
    const capacity = capacityOf(rate)
    if (now > this.#at) this.#tokens = Math.min(capacity, this.#tokens + ((now - this.#at) * rate) / 1000)
    this.#at = Math.max(this.#at, now)
    return rate
  }
}

interface Waiter {
  readonly priority: Priority
  readonly resolve: (granted: boolean) => void
  readonly reject: (reason: unknown) => void
  readonly cleanup: () => void
}

/** The queues in front of a {@link TokenSource}. */
export class Lanes {
  readonly #clock: Clock
  #source: TokenSource
  readonly #queues: Record<Priority, Waiter[]> = { interactive: [], batch: [] }
  #timer: unknown
  #timerAt = Infinity
  /** No request is released before this moment (ms since the epoch): the service's `Retry-After`. */
  #heldUntil = 0

  constructor(source: TokenSource, clock: Clock) {
    this.#source = source
    this.#clock = clock
  }

  /** Requests waiting, both lanes. */
  get waiting(): number {
    return this.#queues.interactive.length + this.#queues.batch.length
  }

  /** Changes where tokens come from (a store that failed, or answers again); waiters stay in line. */
  use(source: TokenSource): void {
    this.#source = source
    this.#release()
  }

  /** How many requests of each lane wait, interactive first. */
  get queued(): { readonly interactive: number; readonly batch: number } {
    return { interactive: this.#queues.interactive.length, batch: this.#queues.batch.length }
  }

  /**
   * Takes a token for a request of `priority`: `true` at once (no await) when one is free and no
   * request of the same or a higher lane waits; else `false`, and the caller awaits {@link Lanes.wait}.
   */
  tryTake(priority: Priority): boolean {
    const now = this.#clock.now()
    if (now < this.#heldUntil) return false
    if (this.#queues.interactive.length > 0 || (priority === 'batch' && this.#queues.batch.length > 0)) return false
    return this.#source.take(priority, now)
  }

  /**
   * Waits for a token in `priority`'s lane (at the front with `first`, for a retry). Resolves `true`
   * once one was taken for it, `false` when `limitMs` passed first (it then holds no place in line);
   * rejects with `signal.reason` when `signal` aborts.
   */
  wait(priority: Priority, signal: AbortSignal, limitMs: number, first = false): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason as Error)
        return
      }
      const queue = this.#queues[priority]
      let limit: unknown
      const leave = (): void => {
        const index = queue.indexOf(waiter)
        if (index >= 0) queue.splice(index, 1)
        cleanup()
        this.#reschedule()
      }
      const onAbort = (): void => {
        leave()
        reject(signal.reason as Error)
      }
      const cleanup = (): void => {
        signal.removeEventListener('abort', onAbort)
        if (limit !== undefined) this.#clock.clearTimeout(limit)
      }
      const waiter: Waiter = { priority, resolve, reject, cleanup }
      if (first) queue.unshift(waiter)
      else queue.push(waiter)
      signal.addEventListener('abort', onAbort, { once: true })
      if (Number.isFinite(limitMs)) {
        limit = this.#clock.setTimeout(
          () => {
            leave()
            resolve(false)
          },
          Math.max(0, limitMs),
        )
      }
      this.#release()
    })
  }

  /** The end of the last hold (ms since the epoch; 0 before any): see {@link Lanes.hold}. */
  get heldUntil(): number {
    return this.#heldUntil
  }

  /** No request leaves before `until` (ms since the epoch); a later hold replaces an earlier one. */
  hold(until: number): void {
    if (until <= this.#heldUntil) return
    this.#heldUntil = until
    this.#reschedule()
  }

  /**
   * After a 429: the tokens there are are thrown away, and waiters wait for new ones; with `until`,
   * for ones that come after it (see {@link TokenSource.drain}).
   */
  drain(until?: number): void {
    this.#source.drain(this.#clock.now(), until)
    this.#reschedule()
  }

  /** The rate changed, or tokens arrived: waiters' turns are computed again (and taken when there). */
  changed(): void {
    this.#release()
  }

  /** Hands tokens to the waiters at the front, interactive first, while there are any; then sets the timer for the next. */
  #release(): void {
    const now = this.#clock.now()
    if (now >= this.#heldUntil) {
      for (const priority of ['interactive', 'batch'] as const) {
        const queue = this.#queues[priority]
        for (let waiter = queue[0]; waiter !== undefined && this.#source.take(priority, now); waiter = queue[0]) {
          queue.shift()
          waiter.cleanup()
          waiter.resolve(true)
        }
        // Batch waits while an interactive request does.
        if (queue.length > 0) break
      }
    }
    this.#reschedule()
  }

  #reschedule(): void {
    const head: Priority | undefined =
      this.#queues.interactive.length > 0 ? 'interactive' : this.#queues.batch.length > 0 ? 'batch' : undefined
    if (head === undefined) {
      this.#clearTimer()
      return
    }
    const now = this.#clock.now()
    const at = Math.max(this.#heldUntil, this.#source.nextAt(head, now))
    if (this.#timer !== undefined && this.#timerAt <= at) return
    this.#clearTimer()
    this.#timerAt = at
    // At least 1 ms: a token due "now" by the arithmetic may still be a fraction short.
    this.#timer = this.#clock.setTimeout(
      () => {
        this.#timer = undefined
        this.#timerAt = Infinity
        this.#release()
      },
      Math.max(1, Math.ceil(at - now)),
    )
  }

  #clearTimer(): void {
    if (this.#timer === undefined) return
    this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#timerAt = Infinity
  }
}
