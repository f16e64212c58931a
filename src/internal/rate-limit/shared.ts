/**
 * Tokens leased from a budget shared with other processes (`RateLimitStore.take`): N workers of one
 * company spend one rate, not N. Requests take leased tokens locally; when there are none, one
 * lease runs at a time for the requests waiting (a tenth of a second's worth of the rate at most),
 * interactive ones first and allowed to take the reserve. Each lease also carries the rate this
 * process learned (after a 429) and brings back the newest one any process learned.
 *
 * A lease that throws, rejects, answers nonsense or takes longer than {@link LEASE_TIMEOUT_MS} fails
 * over to the process's own bucket ({@link LocalTokens}), logged once by the caller; the store is
 * tried again {@link STORE_RETRY_MS} later.
 */
import type { LearnedRate } from './learner.ts'
import { reserveOf, type Priority, type TokenSource } from './lanes.ts'

/** Longest a lease may take before the process paces on its own, ms. */
export const LEASE_TIMEOUT_MS = 250
/** After a store failure, how long the process paces on its own before it tries the store again, ms. */
export const STORE_RETRY_MS = 5_000
/** Leased tokens not used within this long are dropped (a lease must not turn into a burst later), ms. */
const LEASE_LIFETIME_MS = 1_000
/** A lease that got nothing is asked again after a token's time at the rate, but not sooner than this, ms. */
const MIN_RETRY_MS = 5
/**
 * Leases that got nothing for this long while requests waited, ms, are reported (once per client,
 * logged at `warn`): a store whose `take` answers 0 tokens however long it is asked holds every paced call of
 * the process, and its answers are well-formed, so nothing else would say so. The calls keep
 * waiting: a budget another process spends may be what holds them.
 */
export const DRY_WARN_MS = 5_000

/** One lease: what `RateLimitStore.take` is given and answers (public shapes in core/options.ts). */
export interface Lease {
  readonly tokens: number
  readonly reserve: number
  readonly ratePerSecond: number
  readonly burst: number
  readonly learned?: LearnedRate | undefined
  /** Requests this process had accepted since its last lease. */
  readonly accepted: number
}

export interface Granted {
  readonly tokens: number
  readonly learned: LearnedRate | undefined
  /** Requests per second all processes of the store had accepted lately, when the store counts them. */
  readonly acceptedPerSecond: number | undefined
}

/** What a {@link SharedTokens} needs from the pacer around it. */
export interface SharedHost {
  /** The rate at `now` (paced: never `undefined` here). */
  rate(now: number): number
  /** How many requests wait in each lane. */
  waiting(): { readonly interactive: number; readonly batch: number }
  /** Runs one lease against the store: resolves with what it granted, rejects on any failure or after {@link LEASE_TIMEOUT_MS}. */
  lease(lease: Lease): Promise<Granted>
  /** A lease came back (tokens, or a newer learned rate to adopt): let waiters go. */
  granted(answer: Granted): void
  /** A lease failed: pace on the process's own from now on (for {@link STORE_RETRY_MS}). */
  failed(error: unknown): void
  /** Leases have granted nothing for `ms` (at least {@link DRY_WARN_MS}) while requests waited. */
  dry(ms: number): void
  /** The learned rate not yet told to the store, if any; the next lease carries it. */
  unpublished(): LearnedRate | undefined
  /** Requests accepted since the last lease (the count starts again): the next lease carries it. */
  accepted(): number
  /** The clock's time, ms since the epoch. */
  now(): number
}

export class SharedTokens implements TokenSource {
  readonly #host: SharedHost
  #tokens = 0
  #expires = 0
  #inFlight = false
  /** Not before this moment (ms since the epoch) is the store asked again, after a lease that got nothing. */
  #retryAt = 0
  /** Set by drain(): tokens leased before it are not used. */
  #drainedAt = 0
  /** Since when leases have granted nothing (ms since the epoch), or `undefined`; and whether that was reported. */
  #dryFrom: number | undefined
  #dryReported = false

  constructor(host: SharedHost) {
    this.#host = host
  }

  take(priority: Priority, now: number): boolean {
    if (now >= this.#expires) this.#tokens = 0
    if (this.#tokens >= 1) {
      this.#tokens -= 1
      return true
    }
    this.#lease(now, priority)
    return false
  }

  nextAt(_priority: Priority, now: number): number {
    // While a lease runs, its answer lets waiters go (SharedHost.granted): no timer needed, but one
    // at LEASE_TIMEOUT_MS keeps waiters moving if the answer never comes.
    if (this.#inFlight) return now + LEASE_TIMEOUT_MS
    return Math.max(now, this.#retryAt)
  }

  drain(now: number): void {
    this.#tokens = 0
    this.#drainedAt = now
  }

  /** Reports leases that have granted nothing for {@link DRY_WARN_MS}, once until one grants again. */
  #watchDry(tokens: number, askedAt: number, at: number): void {
    if (tokens > 0) {
      this.#dryFrom = undefined
      this.#dryReported = false
      return
    }
    this.#dryFrom ??= askedAt
    if (!this.#dryReported && at - this.#dryFrom >= DRY_WARN_MS) {
      this.#dryReported = true
      this.#host.dry(at - this.#dryFrom)
    }
  }

  /** Asks the store for tokens for the requests waiting, and for the one of `priority` asking now (not queued yet). */
  #lease(now: number, priority: Priority): void {
    if (this.#inFlight || now < this.#retryAt) return
    const waiting = this.#host.waiting()
    const rate = this.#host.rate(now)
    const reserve = reserveOf(rate)
    const most = Math.max(1, Math.ceil(rate / 10))
    // An interactive request asking before it queues counts too: without it, a login call's first
    // lease left the reserve untouched, got nothing while batch traffic had spent the rest, and the
    // call waited a token's time (10 ms at 100/s) and a second round trip for the next.
    const interactive = priority === 'interactive' || waiting.interactive > 0
    const wanted = Math.min(most, Math.max(1, interactive ? waiting.interactive : waiting.batch))
    const lease: Lease = {
      tokens: wanted,
      reserve: interactive ? 0 : reserve,
      ratePerSecond: rate,
      burst: reserve + most,
      learned: this.#host.unpublished(),
      accepted: this.#host.accepted(),
    }
    this.#inFlight = true
    const startedAt = now
    this.#host.lease(lease).then(
      (answer) => {
        this.#inFlight = false
        const at = this.#host.now()
        if (startedAt >= this.#drainedAt) {
          this.#tokens = answer.tokens
          this.#expires = at + LEASE_LIFETIME_MS
        }
        // Nothing granted: ask again after a token's time, unless interactive requests queued
        // while this lease (which kept the reserve for them) was out: theirs may take it, now.
        if (answer.tokens === 0 && !(lease.reserve > 0 && this.#host.waiting().interactive > 0)) {
          this.#retryAt = at + Math.max(MIN_RETRY_MS, 1000 / rate)
        }
        this.#watchDry(answer.tokens, startedAt, at)
        this.#host.granted(answer)
      },
      (error: unknown) => {
        this.#inFlight = false
        this.#host.failed(error)
      },
    )
  }
}
