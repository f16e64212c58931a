/**
 * The learned rate's arithmetic (issue 27), where the public API cannot isolate it: what a 429 that
 * ends probing lowers the rate to. The rule is pure (times in ms, no timers), so it is checked
 * directly; the client-level behaviour is in pacing.test.ts and pacing-store.test.ts.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  ACCEPTED_FLOOR,
  BETA,
  FOUND_MARGIN,
  BETA_AFTER_PAUSE,
  MIN_RATE,
  PROBE_DOUBLING_MS,
  PROBE_FOUND_CAP,
  RateLearner,
  RECOVERY_MS,
  RECOVERY_PER_PAUSE,
  REMEMBER_MS,
  SETTLE_MS,
  UNPACE_AFTER_MS,
} from '../../src/internal/rate-limit/learner.ts'

const T0 = 1_000_000

/** A learner that met its first 429 at T0 after 40 requests accepted in the second before: probing up from 0.8 × 40 a second. */
function probing(): RateLearner {
  const learner = new RateLearner()
  // Sharing a store: the rate is not capped or lowered by this process's own sends (they are only its share).
  learner.capsAtOwnSends = false
  learner.lowersFromOwnSends = false
  for (let i = 0; i < 40; i++) learner.accepted(0, T0 - 1_000 + i * 25)
  const first = learner.refused(T0 - 1, T0, 0)
  expect(first).toMatchObject({ kind: 'lowered', learned: { max: 40, recoveryMs: 0 } })
  return learner
}

/** The 429 that ends probing, for a request sent `ms` after it began (one sent before it was accepted). */
function endProbe(learner: RateLearner, ms: number): number {
  learner.accepted(T0 + ms / 2, T0 + ms / 2 + 10)
  const sentAt = T0 + ms
  const refusal = learner.refused(sentAt, sentAt + 10, 0)
  if (refusal.kind !== 'lowered') throw new Error(`expected the rate lowered, got ${refusal.kind}`)
  return refusal.learned.max
}

describe('a 429 that ends probing', () => {
  const start = BETA * 40

  it('after a whole doubling or more: the limit is taken as the rate averaged over the last doubling, 1 / (2 ln 2) of the rate reached', () => {
    const reached = start * 2 ** 1.5
    expect(endProbe(probing(), 1.5 * PROBE_DOUBLING_MS)).toBeCloseTo(reached / (2 * Math.LN2), 6)
  })

  it('half a doubling after probing began: averaged since it began, not over a doubling that was never probed', () => {
    const reached = start * 2 ** 0.5
    const max = endProbe(probing(), PROBE_DOUBLING_MS / 2)
    // ∫ over the half doubling probed, divided by its length.
    expect(max).toBeCloseTo((reached * (1 - 2 ** -0.5)) / (0.5 * Math.LN2), 6)
    // Between the rate probing started from and the one reached, as every rate probed was.
    expect(max).toBeGreaterThan(start)
    expect(max).toBeLessThan(reached)
  })

  it(`${SETTLE_MS} ms after it began (the soonest a 429 counts): averaged over those ${SETTLE_MS} ms, just above the rate probing started from`, () => {
    const max = endProbe(probing(), SETTLE_MS + 0.5)
    const span = (SETTLE_MS + 0.5) / PROBE_DOUBLING_MS
    expect(max).toBeCloseTo((start * 2 ** span * (1 - 2 ** -span)) / (span * Math.LN2), 6)
    expect(max).toBeGreaterThan(start)
  })
})

describe('a 429 that ends probing, against what the service accepted in its last second', () => {
  const start = BETA * 40
  /** The probe's rate at `t` ms after it began (it began at T0). */
  const probeRate = (t: number): number => start * 2 ** (t / PROBE_DOUBLING_MS)
  /** What a limiter that lets through at most `limit` a second accepts of the probe over the second before `ms` (or since it began), per second: summed ms by ms. */
  const acceptedUnder = (limit: number, ms: number): number => {
    const from = Math.max(0, ms - 1_000)
    let count = 0
    for (let t = from; t < ms; t++) count += Math.min(probeRate(t + 0.5), limit) / 1_000
    return count / ((ms - from) / 1_000)
  }
  /** The 429 that reached the client at T0 + `ms`, the store having counted `accepted` a second (every process's). */
  const endProbeCounted = (ms: number, accepted: number): number => {
    const learner = probing()
    // A request sent while probing was accepted (the store's count says how many).
    learner.accepted(T0 + ms / 2, T0 + ms / 2 + 10)
    const refusal = learner.refused(T0 + ms - 10, T0 + ms, 0, accepted)
    if (refusal.kind !== 'lowered') throw new Error(refusal.kind)
    return refusal.learned.max
  }

  it('a probe that passed the limit early in that time: the limit that explains the count, not the count (the part below it left tokens a bucket did not keep)', () => {
    // 36 a second, passed 85 ms into a probe that ends 700 ms in at 84 a second.
    const accepted = acceptedUnder(36, 700)
    expect(accepted).toBeCloseTo(35.75, 1)
    expect(endProbeCounted(700, accepted)).toBeCloseTo(36, 2)
  })

  it(`one that passed it late, or a fixed window's count (its unspent quota spent at the end of the probe: the count is the limit already): ${PROBE_FOUND_CAP} × the count, no more`, () => {
    // 100 a second, passed 0.82 s into a probe that ends 1.39 s in at 220 a second: 89 a second of it accepted.
    const accepted = acceptedUnder(100, 1_391)
    expect(accepted).toBeCloseTo(89.4, 1)
    expect(endProbeCounted(1_391, accepted)).toBeCloseTo(PROBE_FOUND_CAP * accepted, 6)
    expect(endProbeCounted(1_391, 100)).toBeCloseTo(PROBE_FOUND_CAP * 100, 6)
  })

  it('never above the rate averaged over the last doubling (the limit was met within it)', () => {
    const reached = probeRate(1_000 - 10)
    expect(endProbeCounted(1_000, reached)).toBeCloseTo(reached / (2 * Math.LN2), 6)
  })
})

describe('a 429 that ends probing, whatever the count (fast-check)', () => {
  /** The least `max` a 429 leaves: MIN_RATE once lowered by BETA. */
  const LEAST = MIN_RATE / BETA
  /**
   * A probe that began from `first` a second (the first 429's estimate, the store's count) at T0,
   * or at the end of a wait of `pauseMs`, ended by a 429 that reached the client `ms` after T0 (sent
   * 10 ms before), the store having counted `accepted` a second. Returns the `max` it set and the
   * probe's own figures: the rate averaged over its last doubling at the send (`averaged`, the old
   * rule's ceiling) and its rate when the 429 came (`reached`).
   */
  function endProbe(first: number, pauseMs: number, ms: number, accepted: number) {
    const learner = new RateLearner()
    learner.capsAtOwnSends = false
    learner.lowersFromOwnSends = false
    const firstRefusal = learner.refused(T0 - 1, T0, pauseMs, first)
    if (firstRefusal.kind !== 'lowered') throw new Error(firstRefusal.kind)
    const { max: probedFrom, at } = firstRefusal.learned
    learner.accepted(T0 + 1, T0 + 2)
    const sentAt = T0 + ms - 10
    // The probe's rate, written out again here rather than read from the learner.
    const start = BETA * probedFrom
    const probed = Math.max(0, sentAt - at)
    const span = Math.min(probed, PROBE_DOUBLING_MS) / PROBE_DOUBLING_MS
    const atSend = start * 2 ** (probed / PROBE_DOUBLING_MS)
    const averaged = span < 1e-3 ? atSend : (atSend * (1 - 2 ** -span)) / (span * Math.LN2)
    const reached = start * 2 ** (Math.max(0, T0 + ms - at) / PROBE_DOUBLING_MS)
    const refusal = learner.refused(sentAt, T0 + ms, 0, accepted)
    if (refusal.kind !== 'lowered') throw new Error(refusal.kind)
    return { max: refusal.learned.max, start, averaged, reached }
  }
  const first = fc.oneof(fc.constant(0), fc.constant(LEAST), fc.double({ min: 0, max: 2_000, noNaN: true }))
  const pause = fc.constantFrom(0, 150, 1_000)
  // From just past SETTLE_MS (the soonest a 429 lowers anything) to ten doublings.
  const ms = fc.integer({ min: SETTLE_MS + 11, max: 5_000 })
  // What the store counted, as a share of the rate the probe reached: none, some, or more than it sent.
  const share = fc.oneof(fc.constant(0), fc.double({ min: 0, max: 3, noNaN: true }))

  it(`a finite rate between the count and ${PROBE_FOUND_CAP} × it, never above the probe's averaged rate, never below ${ACCEPTED_FLOOR} × that rate or MIN_RATE (accepted 0, a probe under 100 ms, one still in its wait included)`, () => {
    fc.assert(
      fc.property(first, pause, ms, share, (firstRate, pauseMs, end, part) => {
        const probe = endProbe(firstRate, pauseMs, end, 0)
        const count = part * probe.reached
        const { max, averaged } = endProbe(firstRate, pauseMs, end, count)
        expect(Number.isFinite(max)).toBe(true)
        // The rule before this one (the count), and the most it may add to it.
        const low = Math.max(LEAST, Math.min(averaged, Math.max(count, ACCEPTED_FLOOR * averaged)))
        const high = Math.max(LEAST, Math.min(averaged, Math.max(PROBE_FOUND_CAP * count, ACCEPTED_FLOOR * averaged)))
        expect(max).toBeGreaterThanOrEqual(low * (1 - 1e-9))
        expect(max).toBeLessThanOrEqual(high * (1 + 1e-9))
      }),
      { numRuns: 200 },
    )
  })

  it('a larger count never finds a lower limit', () => {
    fc.assert(
      fc.property(first, pause, ms, share, share, (firstRate, pauseMs, end, a, b) => {
        const { reached } = endProbe(firstRate, pauseMs, end, 0)
        const [less, more] = a <= b ? [a, b] : [b, a]
        expect(endProbe(firstRate, pauseMs, end, less * reached).max).toBeLessThanOrEqual(
          endProbe(firstRate, pauseMs, end, more * reached).max * (1 + 1e-9),
        )
      }),
      { numRuns: 200 },
    )
  })

  it(`against a limiter that lets through at most L a second (no burst): L itself, unless ${PROBE_FOUND_CAP} × the count or the averaged rate is less, or ${ACCEPTED_FLOOR} × that rate more (the count summed ms by ms over the last second, or since the probe began)`, () => {
    fc.assert(
      fc.property(first, ms, fc.double({ min: 0, max: 1, noNaN: true }), (firstRate, end, where) => {
        const { start, reached } = endProbe(firstRate, 0, end, 0)
        // Anywhere from under the rate the probe began at to over the one it reached (spread evenly in
        // doublings): passed early, late, or never.
        const limit = 0.9 * start * ((1.2 * reached) / (0.9 * start)) ** where
        const from = Math.max(0, end - 1_000)
        let count = 0
        for (let t = from; t < end; t++) count += Math.min(start * 2 ** ((t + 0.5) / PROBE_DOUBLING_MS), limit) / 1_000
        count /= (end - from) / 1_000
        const { max, averaged } = endProbe(firstRate, 0, end, count)
        const expected = Math.max(LEAST, Math.min(averaged, Math.max(Math.min(limit, PROBE_FOUND_CAP * count), ACCEPTED_FLOOR * averaged)))
        expect(Math.abs(max - expected)).toBeLessThanOrEqual(1e-3 * expected)
      }),
      { numRuns: 200 },
    )
  })
})

describe('429s that follow a decrease', () => {
  it(`one for a request sent within ${SETTLE_MS} ms after it lowers nothing (a limiter run dry, tokens leased before it); one sent later does`, () => {
    const learner = probing()
    // A request sent after the decrease was accepted: the rate was tried.
    learner.accepted(T0 + 20, T0 + 30)
    expect(learner.refused(T0 + SETTLE_MS - 1, T0 + SETTLE_MS + 9, 0)).toEqual({ kind: 'stale' })
    expect(learner.refused(T0 + SETTLE_MS, T0 + SETTLE_MS + 10, 0)).toEqual({ kind: 'stale' })
    expect(learner.learned).toMatchObject({ max: 40, at: T0 })
    expect(learner.refused(T0 + SETTLE_MS + 1, T0 + SETTLE_MS + 11, 0)).toMatchObject({ kind: 'lowered' })
  })

  it(`the same after adopting a rate another process lowered: ${SETTLE_MS} ms from the adoption`, () => {
    const learner = probing()
    const adoptedAt = T0 + 5_000
    expect(learner.adopt({ max: 90, at: adoptedAt - 5, recoveryMs: 3_000 }, adoptedAt)).toBe(true)
    learner.accepted(adoptedAt + 10, adoptedAt + 20)
    expect(learner.refused(adoptedAt + SETTLE_MS / 2, adoptedAt + SETTLE_MS / 2 + 10, 0)).toEqual({ kind: 'stale' })
    expect(learner.refused(adoptedAt + SETTLE_MS + 1, adoptedAt + SETTLE_MS + 11, 0)).toMatchObject({ kind: 'lowered' })
  })
})

describe('a 429 with a wait', () => {
  it(`starts the climb at the end of the wait, from ${BETA_AFTER_PAUSE} of the limit found (not ${BETA}): the rate is the lowered one all through the pause, and the same at its end`, () => {
    const learner = probing()
    learner.accepted(T0 + 100, T0 + 110)
    const refusal = learner.refused(T0 + 2_000, T0 + 2_010, 1_000)
    if (refusal.kind !== 'lowered') throw new Error(refusal.kind)
    const lowered = BETA_AFTER_PAUSE * refusal.learned.max
    expect(learner.rate(T0 + 2_010)).toBeCloseTo(lowered, 6)
    expect(learner.rate(T0 + 3_010)).toBeCloseTo(lowered, 6)
    expect(learner.rate(T0 + 4_010)!).toBeGreaterThan(lowered)
  })

  it.each([
    ['no wait', 0],
    [`a wait too short to lengthen the climb (150 ms: ${RECOVERY_PER_PAUSE} × it is ${RECOVERY_MS} ms)`, 150],
  ])(`with %s: starts from ${BETA} of the limit found`, (_name, pauseMs) => {
    const learner = probing()
    learner.accepted(T0 + 100, T0 + 110)
    const refusal = learner.refused(T0 + 2_000, T0 + 2_010, pauseMs)
    if (refusal.kind !== 'lowered') throw new Error(refusal.kind)
    expect(refusal.learned.recoveryMs).toBe(RECOVERY_MS)
    expect(learner.rate(T0 + 2_010 + pauseMs)).toBeCloseTo(BETA * refusal.learned.max, 6)
  })
})

describe('a paced 429 where the rate sent had climbed past what the service accepted', () => {
  /**
   * Probing from 80 a second from T0 (100 accepted in the second before), ended one doubling later
   * having sent and had accepted 100 a second in it: the limit found (100 for one process, more for one
   * that shares a store and so cannot tell from its own sends), climbed back to 3 s after that and
   * probed past since (over 115 a second at T0 + 7 s). In the second before T0 + 7 s, 150 sent and
   * `accepted` of them accepted.
   */
  function climbedPast(learner: RateLearner, accepted: number): void {
    const send = (from: number, count: number, ok: number, spanMs = 1_000): void => {
      for (let i = 0; i < count; i++) {
        const at = from + (i * spanMs) / count
        learner.sent(at)
        if (i < ok) learner.accepted(at, at + 5)
      }
    }
    send(T0 - 1_000, 100, 100)
    learner.refused(T0 - 1, T0, 0)
    // 100 a second for one doubling of probing.
    send(T0, PROBE_DOUBLING_MS / 10, PROBE_DOUBLING_MS / 10, PROBE_DOUBLING_MS)
    const probeEnd = learner.refused(T0 + PROBE_DOUBLING_MS - 1, T0 + PROBE_DOUBLING_MS, 0)
    expect(probeEnd).toMatchObject({ kind: 'lowered', learned: { recoveryMs: 3_000 } })
    send(T0 + 6_000, 150, accepted)
  }

  it('one process: the limit found is what the service accepted in the last second (a burst let the rate sent run past it)', () => {
    const learner = new RateLearner()
    climbedPast(learner, 100)
    expect(learner.rate(T0 + 6_990)).toBeGreaterThan(115)
    const refusal = learner.refused(T0 + 6_990, T0 + 7_000, 0)
    if (refusal.kind !== 'lowered') throw new Error(refusal.kind)
    // (Counted in 100 ms slots: the second before holds 9 of them, 85 requests.)
    expect(refusal.learned.max).toBeGreaterThan(90)
    expect(refusal.learned.max).toBeLessThan(101)
  })

  it("sharing a store: what all processes accepted (the store's count, per second not paused), never below half the rate sent", () => {
    const shared = (): RateLearner => {
      const learner = new RateLearner()
      learner.capsAtOwnSends = false
      learner.lowersFromOwnSends = false
      climbedPast(learner, 30) // its own share: says nothing of the limit
      return learner
    }
    const lowered = (learner: RateLearner, group: number | undefined): number => {
      const refusal = learner.refused(T0 + 6_990, T0 + 7_000, 0, group)
      if (refusal.kind !== 'lowered') throw new Error(refusal.kind)
      return refusal.learned.max
    }
    const sentRate = shared().rate(T0 + 6_990)!
    expect(sentRate).toBeGreaterThan(115)
    // Each less the margin (FOUND_MARGIN: the climb flattens under the limit found, not on it).
    expect(lowered(shared(), 100)).toBeCloseTo(FOUND_MARGIN * 100, 6)
    expect(lowered(shared(), undefined)).toBeCloseTo(FOUND_MARGIN * sentRate, 6)
    expect(lowered(shared(), 1)).toBeCloseTo((FOUND_MARGIN * sentRate) / 2, 6)
    // Paused for half of the last second: 50 accepted in it is 100 a second of sending.
    const paused = shared()
    paused.paused(T0 + 6_200, 500)
    expect(lowered(paused, 50)).toBeCloseTo(FOUND_MARGIN * Math.min(sentRate, 100), 6)
  })

  it('the climb after it flattens 2 % under the limit found and passes it only after about 1.5 times its length', () => {
    const learner = new RateLearner()
    learner.capsAtOwnSends = false
    learner.lowersFromOwnSends = false
    climbedPast(learner, 30)
    const refusal = learner.refused(T0 + 6_990, T0 + 7_000, 0, 100) // the store: 100 a second accepted
    if (refusal.kind !== 'lowered') throw new Error(refusal.kind)
    const k = refusal.learned.recoveryMs
    expect(refusal.learned.max).toBeCloseTo(98, 6)
    expect(learner.rate(T0 + 7_000 + k)).toBeCloseTo(98, 6)
    // Found exactly, with no margin, the climb would reach 100 at k; with it, at about 1.5 k.
    expect(learner.rate(T0 + 7_000 + 1.4 * k)).toBeLessThan(100)
    expect(learner.rate(T0 + 7_000 + 1.6 * k)).toBeGreaterThan(100)
  })
})

describe("a first estimate raised to the store's count of all processes", () => {
  /** A first 429 at T0 after 4 requests of this process's own, asking for a wait of `pauseMs`. */
  function firstEstimate(pauseMs: number): RateLearner {
    const learner = new RateLearner()
    for (let i = 0; i < 4; i++) learner.accepted(0, T0 - 10 + i)
    expect(learner.refused(T0 - 1, T0, pauseMs)).toMatchObject({ kind: 'lowered', learned: { max: 4, at: T0 + pauseMs, recoveryMs: 0 } })
    return learner
  }

  it('while its Retry-After lasts: raised to the count, 1 ms newer (so that the store keeps it), probing from BETA × the count', () => {
    const learner = firstEstimate(1_000)
    expect(learner.raiseFirstEstimate(20, T0 + 5)).toEqual({ max: 20, at: T0 + 1_001, recoveryMs: 0 })
    expect(learner.rate(T0 + 1_001)).toBeCloseTo(BETA * 20, 6)
    expect(learner.raiseFirstEstimate(15, T0 + 10)).toBeUndefined() // never lowered by it
  })

  it('not once the wait is over, nor without one: the count then holds requests sent while probing', () => {
    expect(firstEstimate(1_000).raiseFirstEstimate(20, T0 + 1_000)).toBeUndefined()
    expect(firstEstimate(0).raiseFirstEstimate(20, T0 + 1)).toBeUndefined()
  })

  it('not a rate past probing: a later 429 finds the limit from what was sent and accepted', () => {
    const learner = firstEstimate(0)
    learner.accepted(T0 + 200, T0 + 210)
    const lowered = learner.refused(T0 + 300, T0 + 310, 1_000)
    expect(lowered).toMatchObject({ kind: 'lowered', learned: { recoveryMs: RECOVERY_PER_PAUSE * 1_000 } })
    expect(learner.raiseFirstEstimate(1_000, T0 + 400)).toBeUndefined()
  })
})

describe('a limit found before, remembered after pacing ended', () => {
  /** A learner that found a limit (a 429 ended its probing) and then met no 429 until `ms` later, asked its rate then: unpaced. */
  function foundThenQuiet(ms: number): { learner: RateLearner; max: number; at: number } {
    const learner = probing()
    const max = endProbe(learner, PROBE_DOUBLING_MS)
    const at = T0 + PROBE_DOUBLING_MS + 10
    expect(learner.rate(at + ms)).toBeUndefined()
    return { learner, max, at }
  }

  /** The first 429 after the quiet, for a request sent at `now`, asking for a 1 s wait. */
  const firstAgain = (learner: RateLearner, now: number) => learner.refused(now - 10, now, 1_000)

  it(`the next first 429 climbs from ${BETA} of it, back to it in ${RECOVERY_MS} ms whatever the wait (then past it, to measure the limit again), instead of probing up from what was accepted`, () => {
    const { learner, max, at } = foundThenQuiet(UNPACE_AFTER_MS + 1)
    const now = at + UNPACE_AFTER_MS + 60_000
    expect(firstAgain(learner, now)).toEqual({ kind: 'lowered', learned: { max, at: now + 1_000, recoveryMs: RECOVERY_MS } })
    expect(learner.rate(now + 1_000)).toBeCloseTo(BETA * max, 6)
    expect(learner.rate(now + 1_000 + RECOVERY_MS)).toBeCloseTo(max, 6)
  })

  it(`for ${REMEMBER_MS / 86_400_000} days from it, not longer: then a first 429 probes again`, () => {
    const { learner, max } = foundThenQuiet(REMEMBER_MS - 1_000)
    expect(firstAgain(learner, T0 + REMEMBER_MS)).toMatchObject({ kind: 'lowered', learned: { max, recoveryMs: RECOVERY_MS } })
    const { learner: later } = foundThenQuiet(REMEMBER_MS + 1_000)
    expect(firstAgain(later, T0 + REMEMBER_MS + 2_000)).toMatchObject({ kind: 'lowered', learned: { recoveryMs: 0 } })
  })

  it('a first estimate still probing is not a limit found: pacing that ended while probing leaves nothing to climb from', () => {
    const learner = probing()
    expect(learner.rate(T0 + UNPACE_AFTER_MS + 1)).toBeUndefined()
    expect(firstAgain(learner, T0 + UNPACE_AFTER_MS + 10_000)).toMatchObject({ kind: 'lowered', learned: { recoveryMs: 0 } })
  })

  it('one below what the service accepted just before the 429 is stale (a night of 429s left it at the least rate): the first 429 probes up from what was accepted', () => {
    const learner = new RateLearner()
    const now = T0 + 86_400_000
    expect(learner.adopt({ max: MIN_RATE / BETA, at: T0, recoveryMs: RECOVERY_PER_PAUSE * 1_000 }, now)).toBe(false)
    for (let i = 0; i < 40; i++) learner.accepted(0, now - 1_000 + i * 25)
    expect(firstAgain(learner, now)).toEqual({ kind: 'lowered', learned: { max: 40, at: now + 1_000, recoveryMs: 0 } })
  })

  it("the newest limit found wins: an older one read from the store later does not replace this client's own", () => {
    const { learner, max, at } = foundThenQuiet(UNPACE_AFTER_MS + 1)
    expect(learner.adopt({ max: 3 * max, at: at - 86_400_000, recoveryMs: RECOVERY_PER_PAUSE * 1_000 }, at + UNPACE_AFTER_MS + 2)).toBe(
      false,
    )
    const now = at + 86_400_000
    expect(firstAgain(learner, now)).toMatchObject({ kind: 'lowered', learned: { max } })
  })

  it('one another process found, from the store: too old to pace by, it is not adopted, and the next first 429 climbs from it', () => {
    const learner = new RateLearner()
    const now = T0 + 86_400_000
    const lastNight = { max: 97, at: T0, recoveryMs: RECOVERY_PER_PAUSE * 1_000 }
    expect(learner.adopt(lastNight, now)).toBe(false)
    expect(learner.rate(now)).toBeUndefined()
    // A store that answered a probing state (recoveryMs 0) teaches nothing to climb from.
    expect(learner.adopt({ max: 500, at: T0 + 1, recoveryMs: 0 }, now)).toBe(false)
    expect(firstAgain(learner, now + 10)).toEqual({
      kind: 'lowered',
      learned: { max: 97, at: now + 1_010, recoveryMs: RECOVERY_MS },
    })
  })
})
