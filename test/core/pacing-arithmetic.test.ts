/**
 * The learned rate's arithmetic (issue 27), where the public API cannot isolate it: what a 429 that
 * ends probing lowers the rate to. The rule is pure (times in ms, no timers), so it is checked
 * directly; the client-level behaviour is in pacing.test.ts and pacing-store.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { BETA, PROBE_DOUBLING_MS, RateLearner } from '../../src/internal/rate-limit/learner.ts'

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
    const reached = start * 2 ** (1_500 / PROBE_DOUBLING_MS)
    expect(endProbe(probing(), 1_500)).toBeCloseTo(reached / (2 * Math.LN2), 6)
  })

  it('half a doubling after probing began: averaged since it began, not over a doubling that was never probed', () => {
    const reached = start * 2 ** 0.5
    const max = endProbe(probing(), 500)
    // ∫ over the half doubling probed, divided by its length.
    expect(max).toBeCloseTo((reached * (1 - 2 ** -0.5)) / (0.5 * Math.LN2), 6)
    // Between the rate probing started from and the one reached, as every rate probed was.
    expect(max).toBeGreaterThan(start)
    expect(max).toBeLessThan(reached)
  })

  it('at once: the rate probing started from', () => {
    expect(endProbe(probing(), 0.5)).toBeCloseTo(start, 1)
  })
})

describe('a 429 with a wait', () => {
  it('starts the climb at the end of the wait: the rate is the lowered one all through the pause, and the same at its end', () => {
    const learner = probing()
    learner.accepted(T0 + 100, T0 + 110)
    const refusal = learner.refused(T0 + 2_000, T0 + 2_010, 1_000)
    if (refusal.kind !== 'lowered') throw new Error(refusal.kind)
    const lowered = BETA * refusal.learned.max
    expect(learner.rate(T0 + 2_010)).toBeCloseTo(lowered, 6)
    expect(learner.rate(T0 + 3_010)).toBeCloseTo(lowered, 6)
    expect(learner.rate(T0 + 4_010)!).toBeGreaterThan(lowered)
  })
})
