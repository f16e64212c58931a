/**
 * The client-wide pause after a 429: one per transport, so a client and every client derived from
 * it pause together. While it runs, new attempts wait for it (or, with `rateLimitPause: 'fail'`,
 * are refused) instead of each finding the limit on its own; attempts already in flight go on.
 *
 * With a `rateLimitStore` the pause is also shared between processes: a 429 that extends the pause
 * writes its end to the store (`set`, not awaited), and attempts read the store (`get`) at most once
 * per the store's `maxAgeMs` (default {@link RATE_LIMIT_STORE_REFRESH_MS}; 0: before every attempt), one read at a time; attempts that find a read running wait
 * for it at most {@link RATE_LIMIT_STORE_GET_TIMEOUT_MS} from its start. In between, the last value
 * read is used without any await, so a client with a store costs one awaited read per 100 ms, not
 * one per request. A store that throws, rejects, hangs or answers nonsense is logged once and
 * ignored: the process's own pause goes on as without a store.
 */
import { MAX_RETRY_AFTER_MS } from '../../core/retry.ts'
import { RATE_LIMIT_STORE_GET_TIMEOUT_MS, RATE_LIMIT_STORE_REFRESH_MS, type RateLimitStore } from '../../core/options.ts'
import type { ReceivedResponse } from '../exchange.ts'
import type { SdkLogger } from '../sdk-logger.ts'

/** A store value further ahead than this (ms) is not a pause any SDK set: ignored. */
const MAX_STORE_AHEAD_MS = 2 * MAX_RETRY_AFTER_MS

/** The pause in force at a moment: how long is left, and what started it. */
export interface PauseState {
  /** Ms left (> 0). */
  readonly remaining: number
  /** The 429 this process received that started it; `undefined` when it came from the store. */
  readonly response: ReceivedResponse | undefined
  /** Whether the pause is known only from the `rateLimitStore` (another process's 429). */
  readonly fromStore: boolean
}

/** A `get()` running: settles (never rejects) once the store answered; waited for until `waitUntil`. */
export interface PendingRead {
  readonly settled: Promise<void>
  /** `Date.now()` after which attempts stop waiting for it. */
  readonly waitUntil: number
}

export class RateLimitPause {
  /** Until when (ms since the epoch) new attempts wait because of this process's own 429s; 0 when never paused. */
  #until = 0
  /** The 429 that set {@link RateLimitPause.#until}. */
  #response: ReceivedResponse | undefined
  readonly #store: RateLimitStore | undefined
  /** The store's `maxAgeMs`: how old the last value read may be before an attempt reads it again. */
  readonly #maxAge: number
  /** The last valid value read from the store (ms since the epoch); 0 when none. */
  #storeUntil = 0
  /** `Date.now()` after which the store is read again. */
  #nextRead = 0
  #pending: PendingRead | undefined
  /** Store problems already logged (each kind once per client). */
  readonly #warned = new Set<string>()

  constructor(store?: RateLimitStore) {
    this.#store = store
    this.#maxAge = store?.maxAgeMs ?? RATE_LIMIT_STORE_REFRESH_MS
  }

  /** The pause in force now, or `undefined` when new attempts may go (as far as this process knows). */
  state(now: number = Date.now()): PauseState | undefined {
    const until = Math.max(this.#until, this.#storeUntil)
    if (until <= now) return undefined
    const fromStore = this.#storeUntil > this.#until
    return { remaining: until - now, response: fromStore ? undefined : this.#response, fromStore }
  }

  /** When the pause ends (ms since the epoch, the store's last value included), or `undefined` when not paused. */
  until(now: number = Date.now()): number | undefined {
    const until = Math.max(this.#until, this.#storeUntil)
    return until > now ? until : undefined
  }

  /**
   * Before an attempt: reads the store when the last read is older than the store's `maxAgeMs`
   * (default {@link RATE_LIMIT_STORE_REFRESH_MS}), and returns what the attempt should wait for before
   * looking at {@link RateLimitPause.state}: a read running (settles when it has answered or its
   * 250 ms are up, whichever comes first), or `undefined` (no store, a fresh value, a sync answer,
   * or a read past its bound): no await at all.
   */
  refresh(log: SdkLogger, now: number = Date.now()): PendingRead | undefined {
    if (this.#store === undefined) return undefined
    const pending = this.#pending
    if (pending !== undefined) {
      if (now < pending.waitUntil) return pending
      this.slow(pending, log)
      return undefined
    }
    if (now < this.#nextRead) return undefined
    this.#nextRead = now + this.#maxAge
    let answer: PromiseLike<unknown>
    try {
      const value: unknown = this.#store.get()
      if (!isThenable(value)) {
        this.#take(log, value)
        return undefined
      }
      answer = value
    } catch (error) {
      this.#readFailed(log, error)
      return undefined
    }
    const read: PendingRead = {
      settled: Promise.resolve(answer)
        .then(
          (value) => {
            this.#take(log, value)
          },
          (error: unknown) => {
            this.#readFailed(log, error)
          },
        )
        .finally(() => {
          if (this.#pending === read) this.#pending = undefined
          // The next read is counted from when this one answered.
          this.#nextRead = Date.now() + this.#maxAge
        })
        // Never rejects (waiters do not handle rejections): nothing above throws, but a store error
        // whose message getter throws must not become an unhandled rejection either.
        .catch(() => undefined),
      waitUntil: now + RATE_LIMIT_STORE_GET_TIMEOUT_MS,
    }
    this.#pending = read
    return read
  }

  /** After waiting for `read` as long as allowed: logs once if it has still not answered. */
  slow(read: PendingRead, log: SdkLogger): void {
    if (this.#pending !== read || Date.now() < read.waitUntil) return
    this.warnOnce(
      log,
      'slow',
      `rateLimitStore.get() has not answered in ${RATE_LIMIT_STORE_GET_TIMEOUT_MS} ms: calls go on without waiting for it, with this process's own 429 pause`,
    )
  }

  /** Pauses new attempts for `ms` from now because of `response` (a 429), unless a pause already runs longer; tells the store when it extends the pause. */
  extend(ms: number, response: ReceivedResponse, log: SdkLogger, now: number = Date.now()): void {
    const until = now + ms
    if (until <= this.#until) return
    const known = Math.max(this.#until, this.#storeUntil)
    this.#until = until
    this.#response = response
    if (this.#store === undefined || until <= known) return
    try {
      const written = this.#store.set(until)
      if (isThenable(written)) {
        Promise.resolve(written)
          .then(undefined, (error: unknown) => {
            this.warnOnce(
              log,
              'set',
              `rateLimitStore.set() failed: other processes do not learn of this 429 pause (${describeError(error)})`,
            )
          })
          // Nothing awaits this promise: whatever the logger does, no unhandled rejection.
          .catch(() => undefined)
      }
    } catch (error) {
      this.warnOnce(log, 'set', `rateLimitStore.set() failed: other processes do not learn of this 429 pause (${describeError(error)})`)
    }
  }

  /** Takes in a value `get()` answered. */
  #take(log: SdkLogger, value: unknown): void {
    if (typeof value !== 'number' || !Number.isFinite(value) || value > Date.now() + MAX_STORE_AHEAD_MS) {
      this.warnOnce(
        log,
        'value',
        `rateLimitStore.get() answered ${describeValue(value)}, not a moment (ms since the epoch) within ${MAX_STORE_AHEAD_MS} ms from now: ignored`,
      )
      return
    }
    // Within the allowance for clocks that disagree, but longer than any pause an SDK sets from its
    // own clock: taken (another process's clock may be that far ahead), and said, since every call
    // of this process then waits it out (up to 60 s a try) with nothing else to show why.
    const ahead = value - Date.now()
    if (ahead > MAX_RETRY_AFTER_MS) {
      this.warnOnce(
        log,
        'far',
        `rateLimitStore.get() answered a pause ${Math.round(ahead).toLocaleString('en-US')} ms ahead, longer than any Retry-After the SDK waits for (${MAX_RETRY_AFTER_MS.toLocaleString('en-US')} ms): taken, as another process's clock may be ahead of this one's; if the processes' clocks agree, check the store`,
      )
    }
    this.#storeUntil = value
  }

  #readFailed(log: SdkLogger, error: unknown): void {
    this.warnOnce(log, 'get', `rateLimitStore.get() failed: calls go on with this process's own 429 pause (${describeError(error)})`)
  }

  /**
   * Warns once per pause (shared by the client and the clients derived from it, each with its own
   * logger: `SdkLogger.logOnce` would warn once per logger). Counted only when a logger takes it, so
   * a derived client with `logLevel: 'off'` does not silence its parent. `log` never throws.
   */
  warnOnce(log: SdkLogger | undefined, kind: string, message: string): void {
    if (log === undefined || this.#warned.has(kind) || !log.enabled('warn')) return
    this.#warned.add(kind)
    log.log('warn', message)
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
  )
}

/** A store's error, in a few words (the log sink redacts it). */
export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) return `${error.name}: ${error.message}`
    return describeValue(error)
  } catch {
    // A store's error whose name or message throws when read: say what it is, nothing more.
    return `a ${typeof error} that cannot be described`
  }
}

export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value == null) return String(value)
  return typeof value
}
