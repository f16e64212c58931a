/**
 * The pace of one operation whose 429s are its own limit's (scope.ts): a rate learned from that
 * operation's answers alone (the same rule as the client's, `learner.ts`), spent through lanes of
 * its own (`lanes.ts`), in front of the client's. Its 429s lower it and hold it for their
 * `Retry-After`; the client's rate and pause are left alone.
 *
 * Without it, an operation judged to have its own limit was not paced at all: each call waited its
 * own `Retry-After` and sent again, and an export whose page endpoint was limited alone (10/s within
 * a key's 100/s, 16 pages in flight) met 39-72 % 429s in 4 of 9 simulated runs where the client's
 * pacing had kept them under 2 % (bench/pacing/simulate.ts).
 */
import type { ReceivedResponse } from '../exchange.ts'
import type { Clock, Priority } from './lanes.ts'
import { Lanes, LocalTokens } from './lanes.ts'
import { closedHoldMs, RateLearner, UNPACE_AFTER_MS, type Refusal } from './learner.ts'

export class OperationPace {
  readonly #learner = new RateLearner()
  readonly #lanes: Lanes
  readonly #clock: Clock
  /** Ended (see {@link OperationPace.end}): no rate, every waiting call released (but for a hold). */
  #ended = false
  #refusedAt = 0
  /** Until when its calls are held (ms since the epoch), and the 429 that asked for it. */
  #held: { readonly until: number; readonly response: ReceivedResponse } | undefined
  /** "Closed" 429s in a row (none accepted since the rate was lowered), and when the last came. */
  #closedStreak = 0
  #closedAt = 0
  /**
   * When a batch request last found no turn free at this pace (ms since the epoch; 0: never): while
   * that is recent, the pace is what keeps an export under its operation's limit, however long ago
   * its last 429 came (limiter.ts does not end it then).
   */
  #batchHeldAt = 0

  constructor(clock: Clock) {
    this.#clock = clock
    this.#lanes = new Lanes(new LocalTokens((at) => this.rate(at) ?? Infinity, clock.now()), clock)
  }

  /** Requests per second the operation is paced at now; `undefined` once its pace has ended ({@link OperationPace.end}, or 5 minutes without a 429 of its own; limiter.ts ends it after 10 s). */
  rate(now: number): number | undefined {
    return this.#ended ? undefined : this.#learner.rate(now)
  }

  /**
   * Ends the pace: the operation's 429s are the client's again (or the client's rate was lowered,
   * which may be what refused them). The calls waiting here go on (after a `Retry-After` hold).
   */
  end(): void {
    this.#ended = true
    this.#lanes.changed()
  }

  /**
   * Its rate at `now` as {@link OperationPace.rate} gives it, but read without ending anything (the
   * learner ends its rate when read {@link UNPACE_AFTER_MS} after the last 429): for a reader that
   * only shows it (`progress.pacedRate`), whose reads must not move the pacing.
   */
  peekRate(now: number): number | undefined {
    return this.#ended || now - this.#refusedAt > UNPACE_AFTER_MS ? undefined : this.#learner.rate(now)
  }

  /** Whether it held a batch request back within the last `ms` before `now` (nothing read but times). */
  heldBatchWithin(now: number, ms: number): boolean {
    return !this.#ended && this.#batchHeldAt > 0 && now - this.#batchHeldAt <= ms
  }

  /** Whether a request may go now (no await); else the caller awaits {@link OperationPace.wait}. */
  tryTake(priority: Priority): boolean {
    if (this.#lanes.tryTake(priority)) return true
    if (priority === 'batch') this.#batchHeldAt = this.#clock.now()
    return false
  }

  /** Waits for the operation's turn (see `Lanes.wait`): `false` when `limitMs` passed first. */
  wait(priority: Priority, signal: AbortSignal, limitMs: number, first: boolean): Promise<boolean> {
    return this.#lanes.wait(priority, signal, limitMs, first)
  }

  /** When its last 429 came (ms since the epoch). */
  get refusedAt(): number {
    return this.#refusedAt
  }

  sent(now: number): void {
    this.#learner.sent(now)
  }

  accepted(sentAt: number, now: number): void {
    this.#closedStreak = 0
    this.#learner.accepted(sentAt, now)
  }

  /**
   * A 429 of the operation's own limit (`response`, to a request of `priority`), asking for
   * `waitMs` (0 without `Retry-After`): lowers its rate and holds it for the wait. Says what it did
   * to the rate (`'lowered'`; or `'stale'`, `'closed'`: see `Refusal`).
   */
  refused(sentAt: number, now: number, waitMs: number, response: ReceivedResponse, priority: Priority): Refusal['kind'] {
    this.#refusedAt = now
    const refusal = this.#learner.refused(sentAt, now, waitMs)
    let holdMs = waitMs
    if (refusal.kind === 'lowered') {
      this.#closedStreak = 0
      this.#lanes.drain()
    } else if (refusal.kind === 'closed' && sentAt > this.#closedAt) {
      // Nothing accepted since the rate was lowered: back off in time, as the client does.
      this.#closedStreak++
      this.#closedAt = now
      holdMs = Math.max(holdMs, closedHoldMs(this.#closedStreak))
    }
    if (holdMs > 0) {
      this.#learner.paused(now, holdMs)
      this.#lanes.hold(now + holdMs)
      // An export's pages: no tokens pile up while held, so from its end they go at the pace.
      // A bucket filled over a 1 s hold let 2 pages out at once against a limit with no burst: a
      // 429, another hold, the rate lowered again (4.6 -> 3.8 -> 3.2 -> 2.7 requests/s, a second
      // apart, in the simulation), and the export read a third of its endpoint's limit. Not for
      // interactive calls (login calls' own limit): the bucket kept, their waits were as before.
      if (priority === 'batch') this.#lanes.drain(now + holdMs)
      if (now + holdMs > (this.#held?.until ?? 0)) this.#held = { until: now + holdMs, response }
    }
    return refusal.kind
  }

  /** What is left of its hold at `now` (ms) and the 429 that started it, or `undefined` when it is not held. */
  heldFor(now: number): { readonly ms: number; readonly response: ReceivedResponse } | undefined {
    const held = this.#held
    return held === undefined || held.until <= now ? undefined : { ms: held.until - now, response: held.response }
  }
}
