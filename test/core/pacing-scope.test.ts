/**
 * Whose limit a 429 is (src/internal/rate-limit/scope.ts): the client's, which lowers and pauses
 * the whole client, or one operation's own, which holds only its calls. The rule is pure (times in
 * ms, no timers), so its cases are checked here; what a user sees (lists flowing while token
 * issuance alone is refused) is in pacing.test.ts, and its figures against every simulated limiter
 * in BENCHMARKS.md.
 */
import { describe, expect, it } from 'vitest'
import { RateLearner } from '../../src/internal/rate-limit/learner.ts'
import { KEPT_MS, LimitScopes, MIN_OTHERS_ACCEPTED, WINDOW_MS } from '../../src/internal/rate-limit/scope.ts'

const T0 = 1_000_000
const LOGIN = 'auth.issueToken'
const LIST = 'conversations.messages.list'

/** `count` answers of `operation`, one each `everyMs` from `at`. */
function answer(
  scopes: LimitScopes,
  operation: string,
  { at, count, everyMs = 10, refused = false }: { at: number; count: number; everyMs?: number; refused?: boolean },
): void {
  for (let i = 0; i < count; i++) {
    if (refused) scopes.refused(operation, at + i * everyMs)
    else scopes.accepted(operation, at + i * everyMs)
  }
}

describe('whose limit a 429 is', () => {
  it("an operation's first 429 is the client's, whatever the others' answers", () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: 50 })
    expect(scopes.refused(LOGIN, T0 + 600)).toBe('client')
  })

  it("a second 429 of an operation refused most of the time, while the others' requests are accepted and none refused, is its own", () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: 50 })
    expect(scopes.refused(LOGIN, T0 + 600)).toBe('client')
    expect(scopes.refused(LOGIN, T0 + 800)).toBe('operation')
  })

  it("the others' requests met 429s too, at a share like the operation's: the client's", () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: 4 })
    answer(scopes, LIST, { at: T0 + 50, count: 4, refused: true })
    scopes.refused(LOGIN, T0 + 600)
    expect(scopes.refused(LOGIN, T0 + 800)).toBe('client')
  })

  it(`fewer than ${MIN_OTHERS_ACCEPTED} requests of other operations accepted: too little to tell, the client's`, () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: MIN_OTHERS_ACCEPTED - 1 })
    scopes.refused(LOGIN, T0 + 600)
    expect(scopes.refused(LOGIN, T0 + 800)).toBe('client')
  })

  it("the traffic the client's limit mostly carries (an export's pages, accepted between its 429s) stays the client's, however the others fare", () => {
    const scopes = new LimitScopes()
    answer(scopes, LOGIN, { at: T0, count: 5, everyMs: 200 })
    answer(scopes, LIST, { at: T0, count: 90 })
    expect(scopes.refused(LIST, T0 + 950)).toBe('client')
    expect(scopes.refused(LIST, T0 + 960)).toBe('client')
  })

  it(`answers older than the window (${WINDOW_MS} ms) do not count`, () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: 50 })
    scopes.refused(LOGIN, T0 + 600)
    // The lists were accepted before the window that ends at the second 429.
    expect(scopes.refused(LOGIN, T0 + 600 + WINDOW_MS + 1_000)).toBe('client')
  })

  it(`once judged its own, the operation's next 429 stays so for ${KEPT_MS} ms while the others are accepted, even alone in the window; an others' 429 ends it`, () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: 50 })
    scopes.refused(LOGIN, T0 + 600)
    expect(scopes.refused(LOGIN, T0 + 800)).toBe('operation')
    // 4 s on: the window holds this 429 alone and an accepted login; the lists still flow.
    answer(scopes, LOGIN, { at: T0 + 4_500, count: 1 })
    answer(scopes, LIST, { at: T0 + 4_000, count: 50 })
    expect(scopes.refused(LOGIN, T0 + 4_800)).toBe('operation')
    // Then the lists meet 429s as often as the login calls: the client's limit after all.
    answer(scopes, LIST, { at: T0 + 5_000, count: 50, refused: true })
    expect(scopes.refused(LOGIN, T0 + 5_600)).toBe('client')
    // And the verdict is earned again from scratch (one 429 of the login calls in a window is not enough).
    answer(scopes, LIST, { at: T0 + 12_000, count: 50 })
    expect(scopes.refused(LOGIN, T0 + 12_600)).toBe('client')
  })
})

describe('a lowering given back', () => {
  it('restores the rate from before the last lowering; not once another lowering came since', () => {
    const learner = new RateLearner()
    for (let i = 0; i < 40; i++) learner.accepted(0, T0 - 900 + i * 20)
    const first = learner.refused(0, T0, 0)
    expect(first.kind).toBe('lowered')
    if (first.kind !== 'lowered') return
    const rateAfterFirst = learner.rate(T0 + 100)
    for (let i = 0; i < 20; i++) {
      learner.sent(T0 + 500 + i * 20)
      learner.accepted(T0 + 500 + i * 20, T0 + 510 + i * 20)
    }
    const second = learner.refused(T0 + 1_000, T0 + 1_010, 1_000)
    expect(second.kind).toBe('lowered')
    if (second.kind !== 'lowered') return
    expect(learner.restore(first.learned)).toBe(false) // not the last lowering
    expect(learner.restore(second.learned)).toBe(true)
    expect(learner.learned).toBe(first.learned)
    expect(learner.rate(T0 + 100)).toBe(rateAfterFirst)
    expect(learner.restore(second.learned)).toBe(false) // given back once
  })

  it('the first lowering given back leaves the client unpaced', () => {
    const learner = new RateLearner()
    for (let i = 0; i < 40; i++) learner.accepted(0, T0 - 900 + i * 20)
    const first = learner.refused(0, T0, 1_000)
    if (first.kind !== 'lowered') throw new Error(`expected a lowering, got ${first.kind}`)
    expect(learner.restore(first.learned)).toBe(true)
    expect(learner.rate(T0 + 2_000)).toBeUndefined()
  })
})
