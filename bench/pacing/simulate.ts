/**
 * A discrete-event simulation of the SDK's rate limit (src/internal/rate-limit/: the real
 * `RateLimits`, its learner, lanes and shared tokens) against the kinds of limiters real services
 * use, in virtual time: no sockets, no scheduler, so the figures do not move with the machine's
 * load and a change to the learning rule shows in seconds. Used to choose the rule's constants;
 * the real benchmarks (bench/pacing/run.ts, bench/distributed/run.ts) run the SDK against the fake.
 *
 * - One process (the default): an export at 16 requests in flight (10 ms each) and a login call
 *   every 200 ms on the same client, as `bench:pacing` runs it. The two are operations of their
 *   own (`conversations.messages.list`, `auth.issueToken`): the "logins alone" and "export alone"
 *   limiters limit one of them alone too, within the key's limit (rate-limit/scope.ts).
 * - `--processes N`: N clients (processes) sharing a `rateLimitStore` with `take` (the contract's
 *   in-memory store, test/helpers/memory-store.ts, each call `--store-ms` away), `--per-process`
 *   requests in flight each, and the login calls on a client of their own with the same store, as
 *   `bench:distributed` runs the example's workers.
 *
 * Prints useful throughput as a share of the limit (all accepted requests, and the export's alone), the share of 429s, the number of times the
 * limit was touched (rate lowered), the login calls that waited over `--held-ms` (default 1000; a
 * login call every 200 ms, each waiting alone: a 9 s pause holds one, so the percentiles hide it)
 * and their latency.
 *
 * Each limiter runs `--seeds` times (default 9), each request taking 10 ms ± `--jitter` (default 3)
 * drawn from a seeded generator: the figure is the median and the range over the seeds, the same on
 * every machine. `--jitter 0 --seeds 1` is one run in lockstep, as the simulation first ran.
 *
 * `--night 2` (with `--processes`): each run is a second night. The first runs as above; the second,
 * a simulated day later, starts new processes on the same store, which holds the rate the first
 * night learned (the Redis store keeps it a week): the figures are the second night's.
 * `--memory-scale K`: the store holds K times that instead (a limit that changed since, a first
 * night that shared the limit with other traffic).
 *
 * `--trace`: each lowering of the client's rate as it happens, and the SDK's own `info` lines (an
 * operation paced on its own, a lowering given back), by the virtual time.
 *
 * `--login-every MS` (default 200) and `--login-burst N` (default 1): N login calls at once every MS
 * (bursty logins: `--login-burst 20 --login-every 5000`). `--export-after MS` (default 0): the
 * export starts MS after the login calls (a server already serving logins when the nightly export
 * begins).
 *
 *   npm run bench:pacing-simulate -- [--seconds 60] [--processes 4 --per-process 4] [--night 2] [--only 0] [--held-ms 3000] [--login-burst 20 --login-every 5000] [--export-after 5000] [--trace]
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { parseArgs } from 'node:util'
import type { RateLimitStore } from 'chat-service-sdk'
import { mulberry32 } from 'chat-service-sdk/testing'
import { PACING_CHANNEL, type PacingEvent } from '../../src/core/tracing.ts'
import type { ReceivedResponse } from '../../src/internal/exchange.ts'
import type { Clock, Priority } from '../../src/internal/rate-limit/lanes.ts'
import { RateLimits, type LimitedCall } from '../../src/internal/rate-limit/limiter.ts'
import { Redactor } from '../../src/internal/redact.ts'
import type { ResolvedOptions } from '../../src/internal/resolved-options.ts'
import { SdkLogger } from '../../src/internal/sdk-logger.ts'
import { memoryStore } from '../../test/helpers/memory-store.ts'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    processes: { type: 'string', default: '1' },
    'per-process': { type: 'string', default: '16' },
    'store-ms': { type: 'string', default: '1' },
    jitter: { type: 'string', default: '3' },
    seeds: { type: 'string', default: '9' },
    only: { type: 'string' },
    trace: { type: 'boolean', default: false },
    night: { type: 'string', default: '1' },
    'memory-scale': { type: 'string', default: '1' },
    'held-ms': { type: 'string', default: '1000' },
    'login-every': { type: 'string', default: '200' },
    'login-burst': { type: 'string', default: '1' },
    'export-after': { type: 'string', default: '0' },
  },
})
const durationMs = Number(values.seconds) * 1000
const processes = Number(values.processes)
const perProcess = Number(values['per-process'])
const storeMs = Number(values['store-ms'])
const jitterMs = Number(values.jitter)
const seeds = Number(values.seeds)
const night = Number(values.night)
const memoryScale = Number(values['memory-scale'])
const heldMs = Number(values['held-ms'])
const loginEveryMs = Number(values['login-every'])
const loginBurst = Number(values['login-burst'])
const exportAfterMs = Number(values['export-after'])
if (!(exportAfterMs >= 0)) throw new Error('--export-after is a number of ms, 0 or more')
if (!(loginEveryMs > 0) || !(Number.isSafeInteger(loginBurst) && loginBurst >= 1))
  throw new Error('--login-every is a number of ms above 0, --login-burst an integer of at least 1')
if (!(heldMs >= 0)) throw new Error(`--held-ms is a number of ms, 0 or more, not ${values['held-ms']}`)
if (!(memoryScale > 0)) throw new Error(`--memory-scale is a number above 0, not ${values['memory-scale']}`)
if (memoryScale !== 1 && night !== 2) throw new Error('--memory-scale scales the memory of a second night: give --night 2 with it')
if (night !== 1 && !(night === 2 && processes > 1))
  throw new Error('--night is 1, or 2 with --processes (one process without a store remembers nothing from the night before)')
const DAY_MS = 86_400_000
const LATENCY_MS = 10

/** A virtual clock: timers run in time order (ties in the order set); promises settle between them. */
class VirtualClock implements Clock {
  #now: number
  constructor(start: number) {
    this.#now = start
  }
  #seq = 0
  readonly #timers = new Map<number, { at: number; callback: () => void }>()
  now(): number {
    return this.#now
  }
  setTimeout(callback: () => void, ms: number): unknown {
    const id = ++this.#seq
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), callback })
    return id
  }
  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number)
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms))
  }
  async run(until: () => boolean): Promise<void> {
    for (;;) {
      await settle()
      if (until() || this.#timers.size === 0) return
      let nextId = -1
      let next = { at: Infinity, callback: () => {} }
      for (const [id, timer] of this.#timers) if (timer.at < next.at || (timer.at === next.at && id < nextId)) [nextId, next] = [id, timer]
      this.#timers.delete(nextId)
      this.#now = Math.max(this.#now, next.at)
      next.callback()
    }
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve()
}

/** A limiter: `undefined` when the request (a login call's, or the export's) is let through, else its 429's headers. */
type Limiter = (now: number, login: boolean) => Record<string, string> | undefined

function tokenBucket(rate: number, burst: number, retryAfter: boolean): Limiter {
  let tokens = burst
  let at = 0
  return (now) => {
    tokens = Math.min(burst, tokens + ((now - at) * rate) / 1000)
    at = now
    if (tokens >= 1) {
      tokens -= 1
      return undefined
    }
    return retryAfter ? { 'retry-after': String(Math.max(1, Math.ceil((1 - tokens) / rate))) } : {}
  }
}

function fixedWindow(limit: number, windowMs: number, retryAfter: boolean): Limiter {
  let windowStart = 0
  let used = 0
  return (now) => {
    const start = Math.floor(now / windowMs) * windowMs
    if (start !== windowStart) {
      windowStart = start
      used = 0
    }
    if (used < limit) {
      used++
      return undefined
    }
    return retryAfter ? { 'retry-after': String(Math.max(1, Math.ceil((start + windowMs - now) / 1000))) } : {}
  }
}

/** A token bucket whose 429 asks for the same long wait whatever the bucket holds (a conservative server), s. */
function tokenBucketFixedWait(rate: number, burst: number, waitSeconds: number): Limiter {
  const bucket = tokenBucket(rate, burst, true)
  return (now) => (bucket(now, false) === undefined ? undefined : { 'retry-after': String(waitSeconds) })
}

/**
 * A sliding window counter (the count of the window so far plus the last window's, weighted by how
 * much of it the sliding window still covers), `Retry-After` to the current window's end.
 */
function slidingWindowCounter(limit: number, windowMs: number): Limiter {
  let windowStart = 0
  let current = 0
  let last = 0
  return (now) => {
    const start = Math.floor(now / windowMs) * windowMs
    if (start !== windowStart) {
      last = start - windowStart === windowMs ? current : 0
      windowStart = start
      current = 0
    }
    if (current + last * (1 - (now - start) / windowMs) < limit) {
      current++
      return undefined
    }
    return { 'retry-after': String(Math.max(1, Math.ceil((start + windowMs - now) / 1000))) }
  }
}

/** A sliding log: at most `limit` requests in any `windowMs`; `Retry-After` until the oldest leaves it. */
function slidingLog(limit: number, windowMs: number): Limiter {
  const times: number[] = []
  let oldest = 0
  return (now) => {
    while (oldest < times.length && times[oldest]! <= now - windowMs) oldest++
    if (times.length - oldest < limit) {
      times.push(now)
      return undefined
    }
    return { 'retry-after': String(Math.max(1, Math.ceil((times[oldest]! + windowMs - now) / 1000))) }
  }
}

/** Two limiters at once: a request either refuses is refused (the first one counts it first). */
function bothLimits(first: Limiter, second: Limiter): Limiter {
  return (now, login) => first(now, login) ?? second(now, login)
}

/** A limit on the export's endpoint alone (message pages), before the key-wide one: only the export's requests are counted by `own`. */
function exportAlso(own: Limiter, keyWide: Limiter): Limiter {
  return (now, login) => (login ? undefined : own(now, login)) ?? keyWide(now, login)
}

/** At most `limit` requests in flight (each LATENCY_MS), 429 without `Retry-After` past it. */
function concurrency(limit: number): Limiter {
  const ends: number[] = []
  return (now) => {
    for (let i = ends.length - 1; i >= 0; i--) if (ends[i]! <= now) ends.splice(i, 1)
    if (ends.length >= limit) return {}
    ends.push(now + LATENCY_MS)
    return undefined
  }
}

/** A limit on the login calls' endpoint alone (token issuance), before the key-wide one: only login calls are counted by `own`. */
function loginsAlso(own: Limiter, keyWide: Limiter): Limiter {
  return (now, login) => (login ? own(now, login) : undefined) ?? keyWide(now, login)
}

interface Result {
  readonly share: number
  /** The export's accepted requests alone, as a share of the limit (`share` counts the login calls too). */
  readonly exportShare: number
  /** Calls that ended with RateLimitError (starved: nothing of their operation accepted for 60 s). */
  readonly failed: number
  readonly refusedShare: number
  readonly loginP50: number
  readonly loginP95: number
  readonly loginMax: number
  /** Login calls that waited over `--held-ms` (each waits alone: one held 9 s is one call, not 45). */
  readonly loginsHeld: number
  readonly touches: number
  /** The learned rate the store held at the end (with a store). */
  readonly learned: RateLimitStore.LearnedRate | null
}

/** One run; `remembered`: the learned rate the store holds at its start (a night before: a day later). */
async function simulate(
  limiter: Limiter,
  limitPerSecond: number,
  seed: number,
  remembered?: RateLimitStore.LearnedRate | null,
): Promise<Result> {
  // Each seed is one run, the same on every machine.
  const random = mulberry32(seed)
  // Each run starts at its own moment within a second (the limiters' windows and the store's count
  // are aligned to whole seconds of the clock, and so are where the run's first 429s fall in them).
  const clock = new VirtualClock(1_000_000_000 + (remembered === undefined ? 0 : DAY_MS) + Math.floor(random() * 1000))
  // The pause (pause.ts) reads Date.now(); everything else takes the clock.
  const realNow = Date.now
  Date.now = () => clock.now()
  const redactor = new Redactor('simulated-key-secret')
  // With --trace, the SDK's own lines (an operation's own pace, a lowering given back) beside the lowerings.
  const info = (message: string): void => {
    if (values.trace) console.log(`${((clock.now() - start) / 1000).toFixed(3)} s: ${message}`)
  }
  const log = new SdkLogger({ debug() {}, info, warn: info, error() {} }, values.trace ? 'info' : 'off', redactor)
  const options = { log, rateLimitPause: 'wait', maxRetries: 2 } as unknown as ResolvedOptions
  const signal = new AbortController().signal
  const shared = processes > 1 ? memoryStore(() => clock.now()) : undefined
  if (shared !== undefined && remembered !== undefined) shared.learned = remembered
  /** The store `--store-ms` away: each call goes there, is answered, and comes back. */
  const store =
    shared === undefined
      ? undefined
      : {
          maxAgeMs: 100,
          get: async () => {
            await clock.sleep(storeMs / 2)
            const until = await shared.get()
            await clock.sleep(storeMs / 2)
            return until
          },
          set: async (until: number) => {
            await clock.sleep(storeMs / 2)
            await shared.set(until)
          },
          take: async (take: Parameters<typeof shared.take>[0]) => {
            await clock.sleep(storeMs / 2)
            const grant = await shared.take(take)
            await clock.sleep(storeMs / 2)
            return grant
          },
        }
  let touches = 0
  const onPacing = (message: unknown): void => {
    const event = message as PacingEvent
    if (event.reason !== 'lowered') return
    touches++
    if (values.trace)
      console.log(
        `${((clock.now() - start) / 1000).toFixed(3)} s: ${event.previous?.toFixed(1) ?? 'unpaced'} -> ${event.rate?.toFixed(1)} requests/s`,
      )
  }
  subscribe(PACING_CHANNEL, onPacing)
  const clients = Array.from({ length: processes }, () => new RateLimits({ store, pacing: 'adaptive', redactor, clock }))
  const loginClient = processes > 1 ? new RateLimits({ store, pacing: 'adaptive', redactor, clock }) : clients[0]!
  let accepted = 0
  let failed = 0
  let exportAccepted = 0
  let refused = 0
  const logins: number[] = []
  const start = clock.now()
  const end = start + durationMs

  const send = async (limits: RateLimits, priority: Priority): Promise<void> => {
    const login = priority === 'interactive'
    const call: LimitedCall = {
      request: login
        ? { operation: 'auth.issueToken', method: 'POST', path: '/rest/v1/auth/token' }
        : { operation: 'conversations.messages.list', method: 'GET', path: '/rest/v1/conversations/messages' },
      options,
      priority,
      signal,
      left: () => Infinity,
      wait: (ms, _during, settled) => Promise.race([clock.sleep(ms), ...(settled === undefined ? [] : [settled])]),
      abandoned: () => new Error('abandoned') as never,
      outOfTime: () => new Error('out of time') as never,
      pauseBudget: Infinity,
      refusedSince: undefined,
      refusals: 0,
      refused: false,
    }
    for (;;) {
      const admitted = limits.admit(call)
      if (admitted !== undefined) await admitted
      const sentAt = limits.sending(call)
      const headers = limiter(clock.now() + 1, login)
      // Each request takes 10 ms ± the jitter: without it every process's requests land in the
      // same instants, and one rule's figure depends on how ties fall.
      await clock.sleep(LATENCY_MS + (random() * 2 - 1) * jitterMs)
      if (headers === undefined) {
        accepted++
        if (!login) exportAccepted++
        limits.accepted(sentAt, call)
        return
      }
      refused++
      const response: ReceivedResponse = { status: 429, success: false, headers, body: Buffer.alloc(0), truncated: false }
      const verdict = limits.refused(call, response, sentAt)
      // A call that ends (starved: refused for 60 s) is counted, as a user's would fail; its loop goes on with the next call.
      if (verdict?.retry !== true) {
        if (verdict?.reason !== 'starved') throw new Error(`the simulated call stopped: ${JSON.stringify(verdict)}`)
        failed++
        return
      }
      await clock.sleep(verdict.waitMs) // as the transport waits before the call's next attempt
    }
  }

  for (const limits of clients) {
    for (let worker = 0; worker < perProcess; worker++) {
      void (async () => {
        await clock.sleep(exportAfterMs)
        while (clock.now() < end) await send(limits, 'batch')
      })()
    }
  }
  void (async () => {
    while (clock.now() < end) {
      const began = clock.now()
      await Promise.all(
        Array.from({ length: loginBurst }, async () => {
          const sent = clock.now()
          await send(loginClient, 'interactive')
          logins.push(clock.now() - sent)
        }),
      )
      await clock.sleep(Math.max(0, loginEveryMs - (clock.now() - began)))
    }
  })()
  await clock.run(() => clock.now() >= end + 60_000)
  Date.now = realNow
  unsubscribe(PACING_CHANNEL, onPacing)
  logins.sort((a, b) => a - b)
  const at = (q: number): number => logins[Math.min(logins.length - 1, Math.floor(q * logins.length))] ?? NaN
  return {
    share: accepted / (durationMs / 1000) / limitPerSecond,
    exportShare: exportAccepted / (durationMs / 1000) / limitPerSecond,
    failed,
    refusedShare: refused / (accepted + refused),
    loginP50: at(0.5),
    loginP95: at(0.95),
    loginMax: logins.at(-1) ?? NaN,
    loginsHeld: logins.filter((ms) => ms > heldMs).length,
    touches,
    learned: shared?.learned ?? null,
  }
}

const scenarios: { name: string; limit: number; make: () => Limiter }[] = [
  { name: 'token bucket 100/s burst 20, Retry-After', limit: 100, make: () => tokenBucket(100, 20, true) },
  { name: 'token bucket 100/s burst 20, no Retry-After', limit: 100, make: () => tokenBucket(100, 20, false) },
  { name: 'fixed window 100 per 1 s, Retry-After', limit: 100, make: () => fixedWindow(100, 1000, true) },
  { name: 'fixed window 1000 per 10 s, Retry-After', limit: 100, make: () => fixedWindow(1000, 10_000, true) },
  { name: 'fixed window 100 per 1 s, no Retry-After', limit: 100, make: () => fixedWindow(100, 1000, false) },
  { name: 'token bucket 20/s burst 5, Retry-After', limit: 20, make: () => tokenBucket(20, 5, true) },
  { name: 'token bucket 500/s burst 50, no Retry-After', limit: 500, make: () => tokenBucket(500, 50, false) },
  { name: 'fixed window 6000 per 60 s, Retry-After', limit: 100, make: () => fixedWindow(6000, 60_000, true) },
  // Those that a rule for long fixed windows must not mistake for one (BENCHMARKS.md, "Pacing: a
  // long fixed window, tried and reverted").
  { name: 'token bucket 100/s burst 20, Retry-After 10', limit: 100, make: () => tokenBucketFixedWait(100, 20, 10) },
  { name: 'sliding window counter 1000 per 10 s', limit: 100, make: () => slidingWindowCounter(1_000, 10_000) },
  { name: 'sliding log 1000 per 10 s', limit: 100, make: () => slidingLog(1_000, 10_000) },
  {
    name: 'bucket 200/s burst 20 + window 6000 per 60 s',
    limit: 100,
    make: () => bothLimits(tokenBucket(200, 20, true), fixedWindow(6_000, 60_000, true)),
  },
  // A limit on token issuance alone (the login calls ask 5 a second), within the key's 100/s.
  {
    name: 'bucket 100/s; logins alone 1/s, Retry-After',
    limit: 100,
    make: () => loginsAlso(tokenBucket(1, 1, true), tokenBucket(100, 20, true)),
  },
  {
    name: 'bucket 100/s; logins alone 1/s, no Retry-After',
    limit: 100,
    make: () => loginsAlso(tokenBucket(1, 1, false), tokenBucket(100, 20, false)),
  },
  {
    name: 'bucket 100/s; logins alone 1/s, Retry-After 5',
    limit: 100,
    make: () => loginsAlso(tokenBucketFixedWait(1, 1, 5), tokenBucket(100, 20, true)),
  },
  {
    name: 'bucket 100/s; logins alone 1/s, Retry-After 30',
    limit: 100,
    make: () => loginsAlso(tokenBucketFixedWait(1, 1, 30), tokenBucket(100, 20, true)),
  },
  // The export's own endpoint limited alone (its share is of that limit, 10/s): paced at it, not flooded with 429s.
  {
    name: 'bucket 100/s; export alone 10/s, Retry-After',
    limit: 10,
    make: () => exportAlso(tokenBucket(10, 1, true), tokenBucket(100, 20, true)),
  },
  {
    name: 'bucket 100/s; export alone 10/s, no Retry-After',
    limit: 10,
    make: () => exportAlso(tokenBucket(10, 1, false), tokenBucket(100, 20, false)),
  },
  // Key-wide limiters a rule for one endpoint must not take for one (a cold review's).
  { name: 'sliding log 100 per 1 s', limit: 100, make: () => slidingLog(100, 1_000) },
  { name: 'concurrency 5 (10 ms a request: 500/s)', limit: 500, make: () => concurrency(5) },
  // A key-wide limit below what the login calls alone ask (5/s): they take every turn of the
  // client's pace, and the export's requests wait unanswered, so a 429 of theirs may be taken for
  // their own, untested (scope.ts); the export's 429s must prove it wrong.
  { name: 'token bucket 3/s burst 2, Retry-After', limit: 3, make: () => tokenBucket(3, 2, true) },
  { name: 'token bucket 3/s burst 2, no Retry-After', limit: 3, make: () => tokenBucket(3, 2, false) },
  // The export's own endpoint limited alone as above, within the key's bucket of 100/s, with a burst
  // of 10 (a second's worth): the two rows above allow no two pages within 100 ms.
  {
    name: 'export alone 10/s burst 10, Retry-After',
    limit: 10,
    make: () => exportAlso(tokenBucket(10, 10, true), tokenBucket(100, 20, true)),
  },
  {
    name: 'export alone 10/s burst 10, no Retry-After',
    limit: 10,
    make: () => exportAlso(tokenBucket(10, 10, false), tokenBucket(100, 20, false)),
  },
]

const who =
  processes > 1
    ? `${processes} processes sharing a store (${storeMs} ms away), ${perProcess} in flight each, the login calls on a client of their own`
    : `one process, ${perProcess} in flight, the login calls on the same client`
console.log(
  `pacing simulation${night === 2 ? `, the second night (the store holds ${memoryScale === 1 ? '' : `${memoryScale} × `}what the first learned)` : ''}: ${durationMs / 1000} s, ${who}, ${LATENCY_MS} ± ${jitterMs} ms a request, ${loginBurst === 1 ? 'a login call' : `${loginBurst} login calls at once`} every ${loginEveryMs} ms; ` +
    `${seeds} seeded run(s) per limiter: median (min–max)`,
)
console.log(
  'limiter'.padEnd(46),
  'useful / limit'.padEnd(20),
  'export / limit'.padEnd(20),
  '429s'.padEnd(16),
  'touches'.padEnd(10),
  `logins > ${heldMs / 1000} s`.padEnd(14),
  'login p50 / p95 / max ms',
)
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
const cell = (values: readonly number[], digits: number, scale = 1): string => {
  const shown = (value: number): string => (value * scale).toFixed(digits)
  return values.length === 1 ? shown(values[0]!) : `${shown(median(values))} (${shown(Math.min(...values))}–${shown(Math.max(...values))})`
}
for (const [index, scenario] of scenarios.entries()) {
  if (values.only !== undefined && String(index) !== values.only) continue
  const runs: Result[] = []
  for (let seed = 1; seed <= seeds; seed++) {
    const first = await simulate(scenario.make(), scenario.limit, seed)
    const memory = first.learned === null ? null : { ...first.learned, max: first.learned.max * memoryScale }
    runs.push(night === 1 ? first : await simulate(scenario.make(), scenario.limit, seed, memory))
  }
  const of = (key: Exclude<keyof Result, 'learned'>): number[] => runs.map((run) => run[key])
  console.log(
    scenario.name.padEnd(46),
    cell(of('share'), 3).padEnd(20),
    cell(of('exportShare'), 3).padEnd(20),
    `${cell(of('refusedShare'), 1, 100)} %`.padEnd(16),
    cell(of('touches'), 0).padEnd(10),
    cell(of('loginsHeld'), 0).padEnd(14),
    `${median(of('loginP50')).toFixed(0)} / ${median(of('loginP95')).toFixed(0)} / ${Math.max(...of('loginMax')).toFixed(0)}`,
    Math.max(...of('failed')) > 0 ? `(calls failed: ${cell(of('failed'), 0)})` : '',
  )
}
