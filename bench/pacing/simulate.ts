/**
 * A discrete-event simulation of the pacer (src/internal/rate-limit/) against the kinds of limiters
 * real services use, in virtual time: an export at 16 requests in flight (10 ms each) and a login
 * call every 200 ms on the same client. Prints useful throughput as a share of the limit, the share
 * of 429s, and the login calls' latency. Used to choose the learning rule's constants; the real
 * benchmark (bench/pacing/run.ts) runs the SDK against the fake over loopback.
 *
 *   npm run bench:pacing-simulate
 */
import { Lanes, LocalTokens, type Clock, type Priority } from '../../src/internal/rate-limit/lanes.ts'
import { RateLearner } from '../../src/internal/rate-limit/learner.ts'

/** A virtual clock: timers run in time order; promises settle between them. */
class VirtualClock implements Clock {
  #now = 1_000_000
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

/** A limiter: `undefined` when the request is let through, else the Retry-After in ms (`NaN`: a 429 without one). */
type Limiter = (now: number) => number | undefined

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
    return retryAfter ? Math.max(1, Math.ceil((1 - tokens) / rate)) * 1000 : NaN
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
    return retryAfter ? Math.max(1000, Math.ceil((start + windowMs - now) / 1000) * 1000) : NaN
  }
}

interface Result {
  readonly share: number
  readonly refusedShare: number
  readonly loginP50: number
  readonly loginP95: number
  readonly loginMax: number
}

async function simulate(
  limiter: Limiter,
  limitPerSecond: number,
  options: { durationMs: number; concurrency: number; latencyMs: number },
): Promise<Result> {
  const clock = new VirtualClock()
  const learner = new RateLearner()
  let lanes: Lanes | undefined
  let pausedUntil = 0
  let closedStreak = 0
  let holdSetAt = 0
  let accepted = 0
  let refused = 0
  const logins: number[] = []
  const start = clock.now()
  const end = start + options.durationMs
  const signal = new AbortController().signal

  const send = async (priority: Priority): Promise<void> => {
    let retry = false
    for (;;) {
      if (lanes !== undefined) {
        if (!lanes.tryTake(priority)) await lanes.wait(priority, signal, Infinity, retry)
      } else if (clock.now() < pausedUntil) {
        await clock.sleep(pausedUntil - clock.now())
      }
      const sentAt = clock.now()
      learner.sent(sentAt)
      const verdict = limiter(sentAt + 1)
      await clock.sleep(options.latencyMs)
      const now = clock.now()
      if (verdict === undefined) {
        accepted++
        learner.accepted(sentAt, now)
        closedStreak = 0
        return
      }
      refused++
      retry = true
      // As the SDK does (RateLimits.refused): the learner reads the 429 first, then the pause it asks for is recorded.
      const refusal = learner.refused(sentAt, now, Number.isNaN(verdict) ? 0 : verdict)
      if (!Number.isNaN(verdict)) {
        const until = now + verdict
        if (until > pausedUntil) {
          learner.paused(now, until - Math.max(now, pausedUntil))
          pausedUntil = until
        }
      }
      lanes ??= new Lanes(new LocalTokens((at) => learner.rate(at) ?? Infinity, now), clock)
      if (refusal.kind === 'closed' && sentAt >= holdSetAt) {
        closedStreak++
        holdSetAt = now
        const hold = Math.min(8000, 250 * 2 ** (closedStreak - 1))
        if (now + hold > pausedUntil) {
          learner.paused(now, now + hold - Math.max(now, pausedUntil))
          pausedUntil = now + hold
        }
      }
      lanes.hold(pausedUntil)
      if (refusal.kind === 'lowered') lanes.drain()
      if (process.env['TRACE'] !== undefined)
        console.log(
          ((now - start) / 1000).toFixed(3),
          refusal.kind,
          'rate',
          learner.rate(now)?.toFixed(1),
          'max',
          learner.learned?.max.toFixed(1),
          'K',
          learner.learned?.recoveryMs,
          'hold',
          pausedUntil - now,
          'streak',
          closedStreak,
        )
    }
  }

  for (let worker = 0; worker < options.concurrency; worker++) {
    void (async () => {
      while (clock.now() < end) {
        await send('batch')
      }
    })()
  }
  void (async () => {
    while (clock.now() < end) {
      const began = clock.now()
      await send('interactive')
      logins.push(clock.now() - began)
      await clock.sleep(Math.max(0, 200 - (clock.now() - began)))
    }
  })()
  await clock.run(() => clock.now() >= end + 60_000)
  logins.sort((a, b) => a - b)
  const at = (q: number): number => logins[Math.min(logins.length - 1, Math.floor(q * logins.length))] ?? NaN
  return {
    share: accepted / (options.durationMs / 1000) / limitPerSecond,
    refusedShare: refused / (accepted + refused),
    loginP50: at(0.5),
    loginP95: at(0.95),
    loginMax: logins.at(-1) ?? NaN,
  }
}

const only = process.env['ONLY']
const scenarios0: { name: string; limit: number; make: () => Limiter }[] = [
  { name: 'token bucket 100/s burst 20, Retry-After', limit: 100, make: () => tokenBucket(100, 20, true) },
  { name: 'token bucket 100/s burst 20, no Retry-After', limit: 100, make: () => tokenBucket(100, 20, false) },
  { name: 'fixed window 100 per 1 s, Retry-After', limit: 100, make: () => fixedWindow(100, 1000, true) },
  { name: 'fixed window 1000 per 10 s, Retry-After', limit: 100, make: () => fixedWindow(1000, 10_000, true) },
  { name: 'fixed window 100 per 1 s, no Retry-After', limit: 100, make: () => fixedWindow(100, 1000, false) },
  { name: 'token bucket 20/s burst 5, Retry-After', limit: 20, make: () => tokenBucket(20, 5, true) },
  { name: 'token bucket 500/s burst 50, no Retry-After', limit: 500, make: () => tokenBucket(500, 50, false) },
]

const scenarios = scenarios0.filter((s, i) => only === undefined || String(i) === only)
const durationMs = Number(process.argv[2] ?? 60_000)
console.log(`pacing simulation: ${durationMs / 1000} s, 16 in flight, 10 ms a request, a login call every 200 ms`)
console.log('limiter'.padEnd(48), 'useful/limit', ' 429s', ' login p50/p95/max ms')
for (const scenario of scenarios) {
  const r = await simulate(scenario.make(), scenario.limit, { durationMs, concurrency: 16, latencyMs: 10 })
  console.log(
    scenario.name.padEnd(48),
    r.share.toFixed(3).padStart(12),
    `${(r.refusedShare * 100).toFixed(1)}%`.padStart(6),
    `${r.loginP50}/${r.loginP95}/${r.loginMax}`.padStart(20),
  )
}
