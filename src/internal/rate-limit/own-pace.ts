/**
 * The pace of one operation whose 429s are its own limit's (scope.ts): a rate learned from that
 * operation's answers alone (the same rule as the client's, `learner.ts`), spent through lanes of
 * its own (`lanes.ts`), in front of the client's. Its 429s lower it and hold it for their
 * `Retry-After`; the client's rate and pause are left alone.
 *
 * Without it, an operation judged to have its own limit was not paced at all: each call waited its
 * own `Retry-After` and sent again, and an export whose page endpoint was limited alone (10/s within
 * a key's 100/s, 16 pages in flight) met 39-72 % 429s where the client's pacing had kept them under
 * 2 % (bench/pacing/simulate.ts).
 */
import type { Clock, Priority } from './lanes.ts'
import { Lanes, LocalTokens } from './lanes.ts'
import { closedHoldMs, RateLearner } from './learner.ts'

export class OperationPace {
  readonly #learner = new RateLearner()
  readonly #lanes: Lanes
  /** "Closed" 429s in a row (none accepted since the rate was lowered), and when the last came. */
  #closedStreak = 0
  #closedAt = 0

  constructor(clock: Clock) {
    this.#lanes = new Lanes(new LocalTokens((at) => this.#learner.rate(at) ?? Infinity, clock.now()), clock)
  }

  /** Requests per second the operation is paced at now; `undefined` once its pace has ended (no 429 of its own for 5 minutes). */
  rate(now: number): number | undefined {
    return this.#learner.rate(now)
  }

  /** Whether a request may go now (no await); else the caller awaits {@link OperationPace.wait}. */
  tryTake(priority: Priority): boolean {
    return this.#lanes.tryTake(priority)
  }

  /** Waits for the operation's turn (see `Lanes.wait`): `false` when `limitMs` passed first. */
  wait(priority: Priority, signal: AbortSignal, limitMs: number, first: boolean): Promise<boolean> {
    return this.#lanes.wait(priority, signal, limitMs, first)
  }

  /** Requests of the operation waiting for their turn. */
  get waiting(): number {
    return this.#lanes.waiting
  }

  sent(now: number): void {
    this.#learner.sent(now)
  }

  accepted(sentAt: number, now: number): void {
    this.#closedStreak = 0
    this.#learner.accepted(sentAt, now)
  }

  /**
   * A 429 of the operation's own limit, asking for `waitMs` (0 without `Retry-After`): lowers its
   * rate and holds it for the wait. `acceptedPerSecond`: what the operation had accepted lately,
   * counted before its pace began (the first 429's estimate starts there, not at the least rate:
   * an export's pages limited to 10/s, paced from 0.5/s up, read at 2.6/s).
   */
  refused(sentAt: number, now: number, waitMs: number, acceptedPerSecond: number): void {
    const refusal = this.#learner.refused(sentAt, now, waitMs, acceptedPerSecond)
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
    }
  }
}
