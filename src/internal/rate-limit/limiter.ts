/**
 * The service's rate limit, whole: everything the SDK does about 429s, behind the calls the
 * transport makes around each attempt ({@link RateLimits.admit} before it, then
 * {@link RateLimits.accepted} or {@link RateLimits.refused}). One per transport: a client and the
 * clients derived from it share it.
 *
 * - The pause (`pause.ts`): after a 429 that says how long to wait (`Retry-After`), no new attempt
 *   is sent until then; shared between processes through the store's `get`/`set`.
 * - Pacing (`pacing: 'adaptive'`, the default), from the first 429 on: a learned rate
 *   (`learner.ts`) spent through two lanes (`lanes.ts`), from the process's own bucket or a budget
 *   leased from the store (`shared.ts`). Before the first 429 (and without a store) nothing of it
 *   runs: {@link RateLimits.admit} and {@link RateLimits.sending} read one boolean, and
 *   {@link RateLimits.accepted} only counts the response for the first 429's estimate (issue 32).
 * - What a 429 means for the call that met it: under pacing it is sent again when the rate allows,
 *   and no sooner than its 429's `Retry-After`, or without one its own backoff
 *   ({@link refusedBackoff}: a service that limits one endpoint on its own, token issuance say,
 *   answers its retries at once while the rest flows), not counted against `maxRetries`, until the
 *   service has accepted nothing of this call's operation for {@link STARVED_MS}; with
 *   `pacing: 'off'`, 0.3's rule (a retry like a 503, pausing the client).
 * - Whose limit a 429 is (`scope.ts`): the client's lowers the rate and pauses the client; from an
 *   operation's second 429 on, one that the answers around it show to be the operation's own (the
 *   others accepted meanwhile) does neither, its call waits alone, and the lowerings that
 *   operation's earlier 429s made are given back.
 * - Reports: rate changes are logged and published on {@link PACING_CHANNEL}.
 */
import type { LearnedRate, RateLimitGrant, RateLimitStore } from '../../core/options.ts'
import { BACKOFF_CAP_MS, MAX_RETRY_AFTER_MS, MIN_RETRY_DELAY_MS } from '../../core/retry.ts'
import { PACING_CHANNEL, type PacingEvent } from '../../core/tracing.ts'
import type { ChatServiceError } from '../../errors/errors.ts'
import type { ReceivedResponse } from '../exchange.ts'
import { ownLimitError, pausedError, type RequestSummary } from '../read-response.ts'
import type { Redactor } from '../redact.ts'
import type { ResolvedOptions } from '../resolved-options.ts'
import { backoffDelay, serverRequestedDelay, type RetryDecision } from '../retry-policy.ts'
import type { SdkLogger } from '../sdk-logger.ts'
import { Lanes, LocalTokens, systemClock, type Clock, type Priority } from './lanes.ts'
import { closedHoldMs, KEPT_DECREASES, MIN_RATE, RateLearner, type Refusal } from './learner.ts'
import { OperationPace } from './own-pace.ts'
import { describeError, describeValue, RateLimitPause } from './pause.ts'
import { LimitScopes } from './scope.ts'
import { LEASE_TIMEOUT_MS, SharedTokens, STORE_RETRY_MS, type Granted, type Lease } from './shared.ts'

export type { Priority }

/**
 * Under pacing, a call stops retrying 429s once the service has accepted no request of its
 * operation (`customerUsers.list`, `auth.issueToken`, ...) for this long, ms. Per operation, not
 * per client: a limit on one endpoint alone must not hold its calls forever while the others flow.
 */
export const STARVED_MS = 60_000
/**
 * An operation paced on its own (own-pace.ts) is paced so no longer after this long without a 429
 * of its own, ms, unless its pace held a batch request back in that time.
 */
const OWN_PACE_IDLE_MS = 10_000
/**
 * The store's count of what all processes accepted (`acceptedPerSecond`) is used for the first
 * 429's estimate while no older than this, ms: a few of the store's 100 ms reads.
 */
const GROUP_ACCEPTED_MAX_AGE_MS = 1_000
/**
 * A learned rate's `at` further ahead of this process's clock than this (ms) is not one any SDK set
 * (a 429 starts the climb at most MAX_RETRY_AFTER_MS after it; the rest allows for clock skew), as
 * for the pause (pause.ts): a store that answers one fails the `take`. Adopted, it froze every
 * process at the rate it starts from until that moment (its climb starts then, and pacing ends
 * 5 minutes after it), and the store kept it over every newer rate the processes learned.
 */
const MAX_LEARNED_AHEAD_MS = 2 * MAX_RETRY_AFTER_MS
/** Rate changes smaller than this share of the last one reported are not reported again. */
const REPORT_STEP = 0.1

// Read with `process.getBuiltinModule`, not imported: an `import` of a built-in makes Node build an
// ES module facade of all its exports, a cost every process importing the SDK would pay (issue 32).
const pacingChannel = process.getBuiltinModule('node:diagnostics_channel').channel(PACING_CHANNEL)

/** One call, as the rate limit sees it: the transport makes it, the rate limit keeps its state in it. */
export interface LimitedCall {
  readonly request: RequestSummary
  readonly options: ResolvedOptions
  /** The lane its requests use. */
  readonly priority: Priority
  /** The caller's signal and the client's closing, in one. */
  readonly signal: AbortSignal
  /** Ms left of `totalTimeout` (Infinity without one). */
  left(): number
  /** Waits `ms` (or until `settled`): rejects with the call's abort or close error. */
  wait(ms: number, during: string, settled?: Promise<void>): Promise<void>
  /** The error for the call's signal or the client's close, whichever ended a wait (`during` says what for). */
  abandoned(during: string): ChatServiceError
  /** The APITimeoutError of `totalTimeout` running out (or about to), `when`. */
  outOfTime(when: string): ChatServiceError
  /** Pause the call may still wait for, ms: one longest `Retry-After` per try, so that a pause made longer at every look cannot hold it forever. */
  pauseBudget: number
  /** When its current run of 429s began (ms since the epoch), or `undefined`. */
  refusedSince: number | undefined
  /** How many of its attempts in a row were answered 429. */
  refusals: number
  /** Whether a request of it was refused with 429: its retry goes to the front of its lane. */
  refused: boolean
}

/** What a 429 means for the call that met it. */
export type RefusedVerdict =
  /** Sent again when the rate allows, and not before `waitMs` from now. */
  | { readonly retry: true; readonly waitMs: number }
  | { readonly retry: false; readonly reason: 'wait-too-long' | 'starved' | 'no-retries' }
  /** `rateLimitPause: 'fail'`, and the 429 was the operation's own limit asking for `waitMs` (scope.ts). */
  | { readonly retry: false; readonly reason: 'own-limit'; readonly waitMs: number }
  /** `pacing: 'off'`: decided as any retryable failure (`retry-policy.ts`). */
  | undefined

export interface RateLimitsConfig {
  readonly store: RateLimitStore | undefined
  readonly pacing: 'adaptive' | 'off'
  readonly redactor: Redactor
  readonly clock?: Clock | undefined
}

export class RateLimits {
  readonly #pause: RateLimitPause
  readonly #store: RateLimitStore | undefined
  readonly #adaptive: boolean
  readonly #redactor: Redactor
  readonly #clock: Clock
  readonly #learner = new RateLearner()
  /** Whose limit each 429 is: the client's, or its operation's own (scope.ts). */
  readonly #scopes = new LimitScopes()
  /** The operations whose 429s were judged their own, each paced on its own (own-pace.ts) until that pace ends. */
  readonly #ownPaces = new Map<string, OperationPace>()
  /** The rate last told of each operation's own pace (see #reportOwn). */
  readonly #ownReported = new Map<string, number>()
  /** The last lowerings of the rate (the last one last; as many as the learner can give back), and the operation whose 429 made each: given back if those 429s prove the operation's own. */
  readonly #lowerings: { readonly operation: string; readonly learned: LearnedRate }[] = []
  /** Made at the first 429: from then on every attempt takes a token. */
  #lanes: LanesState | undefined
  /** A learned rate this process found that the store has not been told yet. */
  #unpublished: LearnedRate | undefined
  /** The batch calls of each operation waiting for a turn of the client's paced rate, by when each began to wait (the first, the longest): read by the scope's untested verdict (scope.ts). */
  readonly #waiting = new Map<string, Set<{ readonly since: number }>>()
  /** When a request of each operation was last accepted (any response but 429), ms since the epoch. */
  readonly #acceptedAt = new Map<string, number>()
  /** Consecutive "closed" holds (see closedHoldMs, learner.ts), and when the last began. */
  #closedStreak = 0
  #closedAt = 0
  /** The rate last reported (logs, channel). */
  #reported: number | undefined
  /** Unpaced, with a store that has `take`: when its learned rate is read next, and whether a read is out. */
  #nextLearnedRead = 0
  #readingLearned = false
  /** A first 429 met while that read was out: learned from once it is over (see refused). */
  #deferred: { readonly sentAt: number; readonly now: number; readonly pauseMs: number } | undefined
  /** Requests accepted since the last `take` told the store (a store with `take` only), and when that was. */
  #acceptedUntold = 0
  #acceptedToldAt = 0
  /** What all processes of the store had accepted lately (requests/s), as the store last answered, and when. */
  #groupAccepted: { readonly perSecond: number; readonly at: number } | undefined
  /** The logger of the last call (for reports made outside a call: a lease's answer). */
  #log: SdkLogger | undefined
  /**
   * No store, and no 429 seen yet: no pause, no pacing, nothing to wait for or to time. The common
   * case, read first on every attempt; false for good from the first 429 on (the checks after it
   * see the pause and the pace end).
   */
  #quiet: boolean

  constructor(config: RateLimitsConfig) {
    this.#pause = new RateLimitPause(config.store)
    this.#store = config.store
    this.#adaptive = config.pacing === 'adaptive'
    this.#redactor = config.redactor
    this.#clock = config.clock ?? systemClock
    this.#quiet = config.store === undefined
  }

  /**
   * Requests per second a request of `operation` may be sent at now: the client's paced rate, or
   * the operation's own pace where that is lower (own-pace.ts); `undefined` while neither paces it.
   */
  pacedRateOf(operation: string): number | undefined {
    const rate = this.pacedRate
    const own = this.#ownPaceRate(operation, this.#clock.now())
    return own !== undefined && (rate === undefined || own < rate) ? own : rate
  }

  /** Requests per second the client allows itself now, or `undefined` while it is not paced. */
  get pacedRate(): number | undefined {
    if (this.#lanes === undefined) return undefined
    const rate = this.#learner.rate(this.#clock.now())
    if (rate === undefined) this.#unpace()
    return rate
  }

  /** When the client's 429 pause ends (the store's last value included), or `undefined` when it is not paused. */
  get pausedUntil(): number | undefined {
    return this.#pause.until()
  }

  /**
   * Before an attempt of `call`: waits for the pause and for a token of the paced rate, or returns
   * `undefined` (no await at all) when there is nothing to wait for.
   * @throws RateLimitError (paused, `rateLimitPause: 'fail'`; or the pause budget spent), the call's
   * timeout, abort or close error.
   */
  admit(call: LimitedCall): Promise<void> | undefined {
    if (this.#quiet) return undefined
    this.#log = call.options.log
    if (this.#store === undefined && this.#lanes === undefined && this.#ownPaces.size === 0 && this.#pause.until() === undefined)
      return undefined
    return this.#admit(call)
  }

  /**
   * A request of `call`, sent at `sentAt` (what {@link RateLimits.sending} returned), was answered
   * with anything but 429. With `pacing: 'off'` nothing reads what was accepted.
   */
  accepted(sentAt: number, call: LimitedCall): void {
    call.refusals = 0
    if (!this.#adaptive) return
    const now = this.#clock.now()
    // Read by the starvation rule, against a 429's time: nothing accepted before the first 429 counts.
    if (!this.#quiet) {
      this.#acceptedAt.set(call.request.operation, now)
      this.#scopes.accepted(call.request.operation, now)
      this.#ownPaces.get(call.request.operation)?.accepted(sentAt, now)
    }
    this.#closedStreak = 0
    if (this.#store?.take !== undefined) this.#acceptedUntold++
    // Counted unpaced too: the first 429's estimate of the limit is what was accepted before it.
    this.#learner.accepted(sentAt, now)
  }

  /**
   * A request of `call` is sent now: returns the moment, for {@link RateLimits.accepted} /
   * {@link RateLimits.refused}. Before the first 429 it is 0, "before any decrease of the rate",
   * which is all the learner asks of a request sent then (its clock is not read).
   */
  sending(call: LimitedCall): number {
    if (this.#quiet) return 0
    const now = this.#clock.now()
    if (this.#lanes !== undefined) this.#learner.sent(now)
    this.#ownPaces.get(call.request.operation)?.sent(now)
    return now
  }

  /**
   * A request of `call` sent at `sentAt` was answered 429: lowers the rate, pauses the client, and
   * says whether the call goes on (see {@link RefusedVerdict}; `undefined` with `pacing: 'off'`,
   * where the retry policy decides and {@link RateLimits.decided} pauses).
   */
  refused(call: LimitedCall, response: ReceivedResponse, sentAt: number): RefusedVerdict {
    if (!this.#adaptive) return undefined
    this.#quiet = false
    const now = this.#clock.now()
    this.#log = call.options.log
    const waitMs = serverRequestedDelay(response.headers, now)
    if (waitMs !== undefined && waitMs > MAX_RETRY_AFTER_MS) return { retry: false, reason: 'wait-too-long' }
    call.refused = true
    call.refusedSince ??= now
    call.refusals++
    const lanes = this.#paced(now)
    // An operation's own limit: nothing of the client's rate or pause; its call waits what its 429 asked.
    // Only an interactive call's 429 can be the untested guess's: its lane goes first, so the batch
    // requests of other operations can wait behind it for as long as it asks; requests of one lane
    // wait their turn in order (two exports, one queued behind the other's 64 in flight, met 429s
    // of the key's limit taken for the first export's own: 429s 8.6 % to 20 %).
    // Not with a store that shares the rate: a guessed 429 gives no lowering back there (the other
    // processes took it), so the others never get out to prove it wrong, and each window guessed
    // again (4 processes, each with its login calls: 429s 7.6 % to 34 %, the export unhelped).
    const guess = call.priority === 'interactive' && this.#store?.take === undefined
    const othersWaitingSince = guess ? this.#othersWaitingSince(call.request.operation) : undefined
    const scope = this.#scopes.refused(call.request.operation, sentAt, now, {
      waitMs: waitMs ?? 0,
      othersWaitingSince,
      // Only while its pace holds batch requests back (an export's pages): read from times alone, so
      // that judging a 429 moves nothing (with the last 429's 10 s counted too, and the rate read,
      // a login calls' pace beside a concurrency limit made the export 0.614 -> 0.353 over 1,800 s).
      paced: this.#ownPaces.get(call.request.operation)?.heldBatchWithin(now, OWN_PACE_IDLE_MS) === true,
    })
    if (scope === 'operation') return this.#retryAlone(call, response, sentAt, now, waitMs)
    let refusal: Refusal
    if (this.#readingLearned && this.#learner.learned === undefined) {
      // A first 429 met while the store's learned rate is being read waits for that answer: this
      // process's own count is one share of what the service accepts, and a first estimate made
      // from it, newer than the rate the other processes learned, would replace theirs in the store.
      // Learned from once the read has answered without a rate to adopt, or failed (#learnDeferred).
      this.#deferred ??= { sentAt, now, pauseMs: waitMs ?? 0 }
      refusal = { kind: 'stale' }
    } else {
      refusal = this.#learner.refused(sentAt, now, waitMs ?? 0, this.#groupAcceptedAt(now))
    }
    let holdMs = waitMs ?? 0
    if (refusal.kind === 'lowered') {
      this.#lowerings.push({ operation: call.request.operation, learned: refusal.learned })
      if (this.#lowerings.length > KEPT_DECREASES) this.#lowerings.shift()
      this.#lowered(refusal.learned, lanes, call.options.log)
    } else if (refusal.kind === 'closed' && sentAt > this.#closedAt) {
      this.#closedStreak++
      this.#closedAt = now
      holdMs = Math.max(holdMs, closedHoldMs(this.#closedStreak))
    }
    if (holdMs > 0) this.#hold(holdMs, response, call.options.log, now)
    // With a `Retry-After`, the pause holds this call (and every other) for it, as `rateLimitPause`
    // says; the least wait between two attempts still applies. Without one, the call's own backoff.
    return this.#verdict(call, now, waitMs === undefined ? refusedBackoff(call.refusals) : MIN_RETRY_DELAY_MS)
  }

  /**
   * A 429 of the operation's own limit (scope.ts): the call waits its `Retry-After`, else its
   * backoff, alone. The lowerings the operation's earlier 429s made, before they could be told
   * apart, are given back while no other lowering came after them (the climb from them took 20 s
   * and more after a 1 s `Retry-After`); not when the store shares the rate: the other processes
   * have taken the lowered one, and a rate given back here would not reach them.
   */
  #retryAlone(call: LimitedCall, response: ReceivedResponse, sentAt: number, now: number, waitMs: number | undefined): RefusedVerdict {
    const operation = call.request.operation
    let pace = this.#ownPaces.get(operation)
    if (pace === undefined) {
      pace = new OperationPace(this.#clock)
      this.#ownPaces.set(operation, pace)
    }
    // Told when its rate is lowered: not again for each 429 of the same touch (16 pages in flight
    // refused at once wrote 16 lines).
    if (pace.refused(sentAt, now, waitMs ?? 0, response, call.priority) === 'lowered')
      this.#reportOwn(operation, pace, 'lowered', call.options.log, "after a 429 of its own limit; the client's rate is not lowered")
    let restored = false
    const sharesRate = this.#store?.take !== undefined
    for (let last = this.#lowerings.at(-1); !sharesRate && last?.operation === call.request.operation; last = this.#lowerings.at(-1)) {
      this.#lowerings.pop()
      if (!this.#learner.restore(last.learned)) break
      restored = true
    }
    if (restored) {
      this.#lanes?.lanes.changed()
      const reason = this.#learner.rate(now) === undefined ? 'ended' : 'raised'
      this.#report(reason, call.options.log, `the lowering by ${operation}'s 429s given back: they are its own limit's`)
    }
    // A call that would rather fail than wait out a pause fails rather than wait out its own limit's.
    if (waitMs !== undefined && call.options.rateLimitPause === 'fail') return { retry: false, reason: 'own-limit', waitMs }
    return this.#verdict(call, now, waitMs ?? refusedBackoff(call.refusals))
  }

  /** Whether a call refused with 429 goes on, after `waitMs`. */
  #verdict(call: LimitedCall, now: number, waitMs: number): RefusedVerdict {
    // `maxRetries: 0` means no retry at all: the rate is learned, the call ends with the 429.
    if (call.options.maxRetries === 0) return { retry: false, reason: 'no-retries' }
    // Starved: refused for 60 s, and no request of its operation accepted in those 60 s either (one
    // accepted since its first 429 restarts the count, it does not stop it for good).
    const accepted = this.#acceptedAt.get(call.request.operation) ?? Number.NEGATIVE_INFINITY
    if (now - Math.max(call.refusedSince ?? now, accepted) >= STARVED_MS) return { retry: false, reason: 'starved' }
    return { retry: true, waitMs }
  }

  /** The rate was lowered (a 429 of this process): to tell the store, and the tokens there are thrown away. */
  #lowered(learned: LearnedRate, lanes: LanesState | undefined, log: SdkLogger | undefined): void {
    this.#closedStreak = 0
    this.#unpublished = learned
    lanes?.lanes.drain()
    this.#report('lowered', log)
    this.#publish()
  }

  /**
   * Tells the store a rate this process lowered, at once: its next token lease may be a whole
   * `Retry-After` away, and meanwhile another process whose request was in flight would lower the
   * rate on its own from its older, higher one, and the store would keep that newer estimate (a
   * shared 20/s limit was left at 0.6 of it so). The next token lease carries it if this fails.
   */
  #publish(): void {
    const store = this.#store
    const learned = this.#unpublished
    if (store?.take === undefined || learned === undefined || this.#lanes?.onShared !== true) return
    this.#unpublished = undefined
    this.#lease(store, { tokens: 0, reserve: 0, ratePerSecond: 0, burst: 0, learned, accepted: this.#tellAccepted() }).then(
      (answer) => {
        this.#adoptShared(answer)
      },
      () => {
        this.#unpublished ??= learned
      },
    )
  }

  /** The read of the store's learned rate is over, with nothing adopted: a first 429 it held back is learned from now. */
  #learnDeferred(): void {
    const deferred = this.#deferred
    this.#deferred = undefined
    if (deferred === undefined || this.#learner.learned !== undefined) return
    const now = this.#clock.now()
    const refusal = this.#learner.refused(deferred.sentAt, deferred.now, deferred.pauseMs, this.#groupAcceptedAt(now))
    if (refusal.kind === 'lowered') this.#lowered(refusal.learned, this.#paced(now), this.#log)
  }

  /**
   * `pacing: 'off'` (0.3's rule): a 429 the retry policy decided on (`decision`, for failure
   * number `failures` of its call) pauses new attempts for as long as the call waits before its
   * retry, or, when it is not retried any more, for the service's `Retry-After` (else the backoff),
   * so that the client's other calls do not each run into the limit. A wait over
   * {@link MAX_RETRY_AFTER_MS} pauses nothing: the call is thrown at once, and a client frozen
   * for that long would look hung.
   */
  decided(response: ReceivedResponse, decision: RetryDecision, failures: number, log: SdkLogger): void {
    if (response.status !== 429) return
    this.#quiet = false
    let ms: number | undefined
    if (decision.retry) ms = decision.delayMs
    else if (decision.reason === 'exhausted') ms = serverRequestedDelay(response.headers) ?? backoffDelay(failures - 1)
    if (ms !== undefined) this.#pause.extend(ms, response, log)
  }

  async #admit(call: LimitedCall): Promise<void> {
    // Unpaced with a store: the store's learned rate is read before any pause is waited out, so
    // that its answer is in by the pause's end (see refused: a 429 met while it is out teaches nothing).
    this.#readLearned(call.options.log)
    await this.#waitOutPause(call)
    this.#readLearned(call.options.log)
    await this.#ownTurn(call)
    const state = this.#lanes
    if (state === undefined) return
    const now = this.#clock.now()
    if (this.#learner.rate(now) === undefined) {
      this.#unpace()
      return
    }
    // The store failed a while ago: try it again.
    if (state.shared !== undefined && !state.onShared && now >= state.storeDownUntil) this.#useShared(state, state.shared)
    this.#report('raised', call.options.log)
    if (state.lanes.tryTake(call.priority)) return
    // A batch request's wait, for the untested guess (see refused).
    const waiting = call.priority === 'batch' ? this.#waitingOf(call.request.operation) : undefined
    const mark = { since: now }
    waiting?.add(mark)
    let granted: boolean
    try {
      granted = await state.lanes.wait(call.priority, call.signal, call.left(), call.refused)
    } catch {
      throw call.abandoned('while waiting for its turn at the paced rate')
    } finally {
      waiting?.delete(mark)
    }
    if (!granted) throw call.outOfTime(`while waiting for its turn at the paced rate (${this.#describeRate()})`)
  }

  #waitingOf(operation: string): Set<{ readonly since: number }> {
    let waiting = this.#waiting.get(operation)
    if (waiting === undefined) this.#waiting.set(operation, (waiting = new Set()))
    return waiting
  }

  /**
   * Since when the longest-waiting batch call of an operation other than `operation` has waited for
   * a turn of the client's paced rate (ms since the epoch), or `undefined`; from the end of the
   * client's last hold at the latest: a call held by a pause waited for its end, not for turns
   * another operation took (after a fixed window's minute, the first login calls' 429s were taken
   * for their own, and held them to a rate of their own for seconds).
   */
  #othersWaitingSince(operation: string): number | undefined {
    let since: number | undefined
    for (const [other, waiting] of this.#waiting) {
      // A set keeps the order of insertion: the first is the longest-waiting.
      const longest = other === operation ? undefined : waiting.values().next().value
      if (longest !== undefined && (since === undefined || longest.since < since)) since = longest.since
    }
    return since === undefined ? undefined : Math.max(since, this.#lanes?.lanes.heldUntil ?? 0)
  }

  /**
   * The rate `operation` is paced at on its own at `now` (read without ending anything), while its
   * pace has met a 429 of its own or held a batch request back within {@link OWN_PACE_IDLE_MS};
   * else `undefined` (and `#ownTurn` ends the pace at the operation's next call).
   */
  #ownPaceRate(operation: string, now: number): number | undefined {
    const pace = this.#ownPaces.get(operation)
    if (pace === undefined || (now - pace.refusedAt > OWN_PACE_IDLE_MS && !pace.heldBatchWithin(now, OWN_PACE_IDLE_MS))) return undefined
    return pace.peekRate(now)
  }

  /** Ends `operation`'s own pace (own-pace.ts), if it has one: its waiting calls go on. */
  #endOwnPace(operation: string): void {
    const pace = this.#ownPaces.get(operation)
    if (pace === undefined) return
    pace.end()
    this.#ownPaces.delete(operation)
    this.#reportOwn(operation, pace, 'ended', this.#log, 'no 429 of its own lately')
  }

  /**
   * Logs (at `info`) a change of `operation`'s own pace, as {@link RateLimits.#report} does the
   * client's (a `'raised'` only once the rate has grown by a tenth since the last line). Not
   * published on PACING_CHANNEL: its subscribers read each event's rate as the client's.
   */
  #reportOwn(
    operation: string,
    pace: OperationPace,
    reason: 'lowered' | 'raised' | 'ended',
    log: SdkLogger | undefined,
    because?: string,
  ): void {
    const rate = pace.rate(this.#clock.now())
    const previous = this.#ownReported.get(operation)
    if (reason === 'raised' && (previous === undefined || rate === undefined || rate < previous * (1 + REPORT_STEP))) return
    if (rate === undefined) this.#ownReported.delete(operation)
    else this.#ownReported.set(operation, rate)
    if (log?.enabled('info') !== true) return
    const shown = rate === undefined ? 'unpaced' : `${formatRate(rate)} requests/s`
    log.log('info', `pacing ${operation}: ${shown} (${because ?? 'while requests succeed'})`, {
      operation,
      pacedRate: rate,
      previousRate: previous,
    })
  }

  /**
   * The call's turn at its operation's own pace (own-pace.ts), when its 429s were judged its own:
   * taken before the client's, so that a turn of the client's is not held while it waits.
   */
  async #ownTurn(call: LimitedCall): Promise<void> {
    const operation = call.request.operation
    const pace = this.#ownPaces.get(operation)
    if (pace === undefined) return
    const now = this.#clock.now()
    // Ended, or no 429 of its own for a while: what it held to may not have been its own limit (a
    // burst of login calls beside a key-wide concurrency limit was taken for one, and held to 0.6/s
    // for minutes while the client ran at 440/s). The next 429 of its own paces it again. Not while
    // it holds batch requests back: then no 429 is what the pace is for, and an export whose pages
    // were let out all at once (16 in flight against its endpoint's 10/s) met 15 429s each time.
    if (this.#ownPaceRate(operation, now) === undefined) {
      this.#endOwnPace(operation)
      return
    }
    const held = pace.heldFor(now)
    if (held !== undefined) {
      // A call that would rather fail than wait out a pause fails rather than wait out its
      // operation's own hold, with the 429 that started it; and one whose deadline comes first, at once.
      if (call.options.rateLimitPause === 'fail') throw ownLimitError(held.response, call.request, held.ms, this.#redactor)
      if (held.ms >= call.left()) throw call.outOfTime(`${operation} is held after a 429 of its own for another ${held.ms} ms`)
    }
    this.#reportOwn(operation, pace, 'raised', call.options.log)
    if (pace.tryTake(call.priority)) return
    let granted: boolean
    try {
      granted = await pace.wait(call.priority, call.signal, call.left(), call.refused)
    } catch {
      throw call.abandoned(`while waiting for its turn at ${operation}'s own paced rate`)
    }
    if (!granted) throw call.outOfTime(`while waiting for its turn at ${operation}'s own paced rate`)
  }

  /** The client-wide pause: this process's, and the store's. Looked at again after each wait: another 429 may have made it longer. */
  async #waitOutPause(call: LimitedCall): Promise<void> {
    const { options, request } = call
    for (;;) {
      const read = this.#pause.refresh(options.log)
      if (read !== undefined) {
        const ms = Math.min(read.waitUntil - Date.now(), call.left())
        if (ms > 0) await call.wait(ms, 'while reading the rateLimitStore', read.settled)
        this.#pause.slow(read, options.log)
      }
      const pause = this.#pause.state()
      if (pause === undefined) return
      // Paced: nothing of the rate is spent during the pause. Unpaced: nothing to hold, and no pacing
      // started here (it used to be, and skipped the read of the store's learned rate that follows
      // the pause: a process's first 429 then told the store an estimate from its own count).
      this.#lanes?.lanes.hold(this.#clock.now() + pause.remaining)
      const paused = pause.remaining
      if (options.rateLimitPause === 'fail') throw pausedError(pause.response, request, paused, this.#redactor, pause.fromStore)
      const from = pause.fromStore ? ' seen by another process (rateLimitStore)' : ''
      if (paused >= call.left()) throw call.outOfTime(`the client is paused after a 429${from} for another ${paused} ms`)
      if (paused > call.pauseBudget) {
        const spent = MAX_RETRY_AFTER_MS * (options.maxRetries + 1) - call.pauseBudget
        const because = `waiting it out would take the call past ${MAX_RETRY_AFTER_MS} ms of pause per try (maxRetries + 1 tries; ${spent} ms waited already)`
        throw pausedError(pause.response, request, paused, this.#redactor, pause.fromStore, because)
      }
      call.pauseBudget -= paused
      const shared = pause.fromStore ? ', from the rateLimitStore' : ''
      await call.wait(paused, `while waiting out the client's 429 pause (${paused} ms${shared})`)
    }
  }

  /** Pauses new attempts for `ms` from `now`: the pause (shared through the store), and the lanes. */
  #hold(ms: number, response: ReceivedResponse, log: SdkLogger, now: number): void {
    const before = this.#pause.until(now) ?? now
    this.#pause.extend(ms, response, log, now)
    if (now + ms > before) this.#learner.paused(now, now + ms - before)
    this.#lanes?.lanes.hold(now + ms)
  }

  /** The lanes, made at the first 429 (pacing starts); `undefined` with `pacing: 'off'`. */
  #paced(now: number): LanesState | undefined {
    if (!this.#adaptive) return undefined
    if (this.#lanes !== undefined) return this.#lanes
    const local = new LocalTokens((at) => this.#learner.rate(at) ?? Infinity, now)
    const lanes = new Lanes(local, this.#clock)
    const state: LanesState = { lanes, local, shared: undefined, onShared: false, storeDownUntil: 0 }
    const store = this.#store
    if (store?.take !== undefined) {
      state.shared = new SharedTokens({
        rate: (at) => this.#learner.rate(at) ?? Infinity,
        waiting: () => lanes.queued,
        lease: (lease) => this.#lease(store, lease),
        granted: (answer) => {
          this.#learner.lowersFromOwnSends = false
          this.#adoptShared(answer)
          lanes.changed()
        },
        failed: (error) => {
          state.storeDownUntil = this.#clock.now() + STORE_RETRY_MS
          state.onShared = false
          // Its own tokens: growth capped at its own sends again. What a 429 lowers from stays as it
          // was (see RateLearner.lowersFromOwnSends).
          this.#learner.capsAtOwnSends = true
          lanes.use(local)
          this.#pause.warnOnce(
            this.#log,
            'take',
            `rateLimitStore.take() failed: this process paces on its own for ${STORE_RETRY_MS} ms, then tries the store again (${describeError(error)})`,
          )
        },
        dry: (ms) => {
          this.#pause.warnOnce(
            this.#log,
            'take-dry',
            `rateLimitStore.take() has granted no token for ${Math.round(ms).toLocaleString('en-US')} ms while this process's requests waited (paced at ${this.#describeRate()}): they wait on. If no other process spends the budget, check the store's take()`,
          )
        },
        unpublished: () => {
          const learned = this.#unpublished
          this.#unpublished = undefined
          return learned
        },
        accepted: () => this.#tellAccepted(),
        now: () => this.#clock.now(),
      })
      this.#useShared(state, state.shared)
    }
    this.#lanes = state
    return state
  }

  /** Tokens come from the store (again). */
  #useShared(state: LanesState, shared: SharedTokens): void {
    state.onShared = true
    this.#learner.capsAtOwnSends = false
    state.lanes.use(shared)
  }

  /** One `take` against the store: its answer checked, bounded by LEASE_TIMEOUT_MS. */
  async #lease(store: RateLimitStore, lease: Lease): Promise<Granted> {
    const answer = await withTimeout(() => store.take?.(lease), LEASE_TIMEOUT_MS, this.#clock)
    const granted = checkGrant(answer, lease.tokens)
    if (granted === undefined) throw new Error(`it answered ${describeValue(answer)}, not a RateLimitGrant`)
    const ahead = (granted.learned?.at ?? 0) - this.#clock.now()
    if (ahead > MAX_LEARNED_AHEAD_MS)
      throw new Error(
        `it answered a learned rate whose at is ${Math.round(ahead)} ms ahead of this process's clock (no SDK sets one over ${MAX_LEARNED_AHEAD_MS} ms ahead: do the clocks of the processes sharing the store agree?)`,
      )
    // A learned rate under the least any client paces at is no SDK's: taken, it held every process
    // near that least rate for as long as its climb back takes (minutes, from 0.01 a second).
    if (granted.learned !== undefined && granted.learned.max < MIN_RATE)
      throw new Error(
        `it answered a learned rate of ${granted.learned.max} requests/s, under ${MIN_RATE} requests/s, the least any client paces at: no SDK stores one`,
      )
    if (granted.acceptedPerSecond !== undefined) this.#groupAccepted = { perSecond: granted.acceptedPerSecond, at: this.#clock.now() }
    return granted
  }

  /**
   * The accepted requests not yet told to the store, for the lease about to run (the count starts
   * again). The store adds them to its current second: counted over more than a second (the store
   * was down, or not asked for a while), only their share of the last second is told, so that a
   * lump does not pass for a rate.
   */
  #tellAccepted(): number {
    const now = this.#clock.now()
    const since = now - this.#acceptedToldAt
    const accepted = since > 1_000 ? Math.round((this.#acceptedUntold * 1_000) / since) : this.#acceptedUntold
    this.#acceptedUntold = 0
    this.#acceptedToldAt = now
    return accepted
  }

  /**
   * What all processes of the store accepted lately (requests/s): its last answer, while no older
   * than GROUP_ACCEPTED_MAX_AGE_MS, and what this process accepted since it last told the store
   * (not in that answer yet: at an export's start, when the first 429 comes, most of what was
   * accepted came in the last 100 ms).
   */
  #groupAcceptedAt(now: number): number | undefined {
    const group = this.#groupAccepted
    if (group === undefined || now - group.at > GROUP_ACCEPTED_MAX_AGE_MS) return undefined
    const since = now - this.#acceptedToldAt
    return group.perSecond + (since > 1_000 ? (this.#acceptedUntold * 1_000) / since : this.#acceptedUntold)
  }

  /** Unpaced, with a store that has `take`: reads the stored learned rate at the store's cadence (not awaited) to learn that another process started pacing. */
  #readLearned(log: SdkLogger): void {
    const store = this.#store
    if (store?.take === undefined || this.#lanes !== undefined) return
    const now = this.#clock.now()
    if (now < this.#nextLearnedRead) return
    this.#nextLearnedRead = now + (store.maxAgeMs ?? 100)
    this.#readingLearned = true
    this.#lease(store, { tokens: 0, reserve: 0, ratePerSecond: 0, burst: 0, accepted: this.#tellAccepted() }).then(
      (answer) => {
        this.#readingLearned = false
        this.#adoptShared(answer)
        this.#learnDeferred()
      },
      (error: unknown) => {
        this.#readingLearned = false
        this.#learnDeferred()
        this.#nextLearnedRead = this.#clock.now() + STORE_RETRY_MS
        this.#pause.warnOnce(log, 'take', `rateLimitStore.take() failed: this process paces on its own (${describeError(error)})`)
      },
    )
  }

  /** A learned rate from the store: taken when newer than this process's (pacing starts if it had not); then a first estimate raised to the store's count. */
  #adoptShared(answer: Granted): void {
    const learned = answer.learned
    if (learned === undefined || !this.#adaptive) return
    const now = this.#clock.now()
    if (this.#learner.adopt(learned, now)) {
      this.#learner.lowersFromOwnSends = false
      this.#paced(now)?.lanes.changed()
      this.#report('shared', this.#log)
    }
    this.#raiseFirstEstimate(now)
  }

  /**
   * A first estimate raised to what all processes of the store accepted, now that the store has
   * counted the others' shares (see RateLearner.raiseFirstEstimate), and told the store at once.
   */
  #raiseFirstEstimate(now: number): void {
    const group = this.#groupAcceptedAt(now)
    if (group === undefined || this.#learner.raiseFirstEstimate(group, now) === undefined) return
    this.#unpublished = this.#learner.learned
    this.#lanes?.lanes.changed()
    this.#report('shared', this.#log) // learned from the store: its count of all processes
    this.#publish()
  }

  #unpace(): void {
    if (this.#lanes === undefined || this.#lanes.lanes.waiting > 0) return
    this.#lanes = undefined
    this.#report('ended', this.#log)
  }

  /** Logs (at `info`) and publishes a rate change worth telling; `because` says why in the log line, when the reason alone would not. */
  #report(reason: PacingEvent['reason'], log: SdkLogger | undefined, because?: string): void {
    const rate = this.#lanes === undefined ? undefined : this.#learner.rate(this.#clock.now())
    const previous = this.#reported
    if (reason === 'raised' && previous !== undefined && rate !== undefined && rate < previous * (1 + REPORT_STEP)) return
    // Already told unpaced (a lowering given back): the lanes' end says nothing new.
    if (reason === 'ended' && previous === undefined) return
    this.#reported = rate
    const event: PacingEvent = { reason, rate, previous }
    if (pacingChannel.hasSubscribers) pacingChannel.publish(event)
    if (log?.enabled('info') !== true) return
    const shown = rate === undefined ? 'unpaced' : `${formatRate(rate)} requests/s`
    const why =
      because ??
      {
        lowered: 'after a 429',
        shared: 'learned from the other processes (rateLimitStore)',
        raised: 'while requests succeed',
        ended: `no 429 for a while`,
      }[reason]
    log.log('info', `pacing: ${shown} (${why})`, { pacedRate: rate, previousRate: previous })
  }

  #describeRate(): string {
    const rate = this.#learner.rate(this.#clock.now())
    return rate === undefined ? 'unpaced' : `${formatRate(rate)} requests/s`
  }
}

interface LanesState {
  readonly lanes: Lanes
  readonly local: LocalTokens
  shared: SharedTokens | undefined
  /** Whether tokens come from the store now (not after it failed, until STORE_RETRY_MS later). */
  onShared: boolean
  /** After a store failure: not before this moment is the store used again. */
  storeDownUntil: number
}

function formatRate(rate: number): string {
  return rate >= 10 ? rate.toFixed(0) : rate.toFixed(1)
}

/** `fn()`'s answer, or a rejection after `ms` (or when `fn` throws). */
async function withTimeout<T>(fn: () => T | PromiseLike<T>, ms: number, clock: Clock): Promise<T> {
  let timer: unknown
  try {
    return await Promise.race([
      Promise.resolve().then(fn),
      new Promise<never>((_resolve, reject) => {
        timer = clock.setTimeout(() => {
          reject(new Error(`it has not answered in ${ms} ms`))
        }, ms)
      }),
    ])
  } finally {
    clock.clearTimeout(timer)
  }
}

/** A store's answer as a {@link Granted}, or `undefined` when it is not a `RateLimitGrant` for `asked` tokens. */
function checkGrant(answer: unknown, asked: number): Granted | undefined {
  if (answer === null || typeof answer !== 'object') return undefined
  const { tokens, learned, acceptedPerSecond: group } = answer as RateLimitGrant
  if (typeof tokens !== 'number' || !Number.isInteger(tokens) || tokens < 0 || tokens > asked) return undefined
  // Optional: a store that does not count answers nothing; one that answers something else is not a store to trust.
  if (group !== undefined && group !== null && !(typeof group === 'number' && Number.isFinite(group) && group >= 0)) return undefined
  const acceptedPerSecond = group ?? undefined
  if (learned === undefined || learned === null) return { tokens, learned: undefined, acceptedPerSecond }
  const valid =
    typeof learned === 'object' &&
    [learned.max, learned.at, learned.recoveryMs].every((value) => typeof value === 'number' && Number.isFinite(value) && value >= 0) &&
    learned.max > 0
  return valid ? { tokens, learned: { max: learned.max, at: learned.at, recoveryMs: learned.recoveryMs }, acceptedPerSecond } : undefined
}

/**
 * The least wait (ms) before a call's next attempt after `refusals` 429s in a row: 100 ms, doubled
 * at each further one, up to the backoff's cap (8 s). Pacing spaces the client's requests; this
 * spaces one call's, which pacing cannot when the rest of the client is accepted (a limit on one
 * endpoint alone): without it, one token issuance answered 429 with no `Retry-After` was sent 632
 * times in 300 ms.
 */
export function refusedBackoff(refusals: number): number {
  return Math.min(BACKOFF_CAP_MS, MIN_RETRY_DELAY_MS * 2 ** Math.max(0, refusals - 1))
}
