/**
 * Whose limit a 429 is (src/internal/rate-limit/scope.ts): the client's, which lowers and pauses
 * the whole client, or one operation's own, which holds only its calls. The rule is pure (times in
 * ms, no timers), so its cases are checked here; what a user sees (lists flowing while token
 * issuance alone is refused) is in pacing.test.ts, and its figures against every simulated limiter
 * in BENCHMARKS.md.
 */
import { describe, expect, it } from 'vitest'
import type { ReceivedResponse } from '../../src/internal/exchange.ts'
import { LocalTokens, type Clock } from '../../src/internal/rate-limit/lanes.ts'
import { RateLearner } from '../../src/internal/rate-limit/learner.ts'
import { OperationPace } from '../../src/internal/rate-limit/own-pace.ts'
import { FORGET_MS, KEPT_MS, LimitScopes, MIN_OTHERS_ACCEPTED, untestedAfterMs, WINDOW_MS } from '../../src/internal/rate-limit/scope.ts'

const T0 = 1_000_000
const LOGIN = 'auth.issueToken'
const LIST = 'conversations.messages.list'

/** A 429 of `operation` at `at`, for a request sent 10 ms before: whose limit it is. */
function refuse(scopes: LimitScopes, operation: string, at: number, waitMs = 0): string {
  return scopes.refused(operation, at - 10, at, { waitMs })
}

/** `count` answers of `operation`, one each `everyMs` from `at`. */
function answer(
  scopes: LimitScopes,
  operation: string,
  { at, count, everyMs = 10, refused = false }: { at: number; count: number; everyMs?: number; refused?: boolean },
): void {
  for (let i = 0; i < count; i++) {
    if (refused) refuse(scopes, operation, at + i * everyMs)
    else scopes.accepted(operation, at + i * everyMs)
  }
}

describe('whose limit a 429 is', () => {
  it("an operation's first 429 is the client's, whatever the others' answers", () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: 50 })
    expect(refuse(scopes, LOGIN, T0 + 600)).toBe('client')
  })

  it("a second 429 of an operation refused most of the time, while the others' requests are accepted and none refused, is its own", () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: 50 })
    expect(refuse(scopes, LOGIN, T0 + 600)).toBe('client')
    expect(refuse(scopes, LOGIN, T0 + 800)).toBe('operation')
  })

  it("the others' requests met 429s too, at a share like the operation's: the client's", () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: 4 })
    answer(scopes, LIST, { at: T0 + 50, count: 4, refused: true })
    refuse(scopes, LOGIN, T0 + 600)
    expect(refuse(scopes, LOGIN, T0 + 800)).toBe('client')
  })

  it("the others met 429s in another second of the window, at more than a tenth of the operation's share: the client's", () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0 - 500, count: 4 })
    answer(scopes, LIST, { at: T0 - 400, count: 4, refused: true })
    refuse(scopes, LOGIN, T0 + 600)
    expect(refuse(scopes, LOGIN, T0 + 800)).toBe('client')
  })

  it("the others met one 429 among hundreds accepted, in a second the operation met one: the client's (a burst that took the key's bucket)", () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0 - 900, count: 200, everyMs: 4 })
    refuse(scopes, LOGIN, T0 + 600)
    answer(scopes, LIST, { at: T0 + 700, count: 1, refused: true })
    expect(refuse(scopes, LOGIN, T0 + 800)).toBe('client')
    // The same 429 of the lists a second earlier: a share too small to tell, and not together.
    const apart = new LimitScopes()
    answer(apart, LIST, { at: T0 - 900, count: 200, everyMs: 4 })
    answer(apart, LIST, { at: T0 - 50, count: 1, refused: true })
    refuse(apart, LOGIN, T0 + 600)
    expect(refuse(apart, LOGIN, T0 + 800)).toBe('operation')
  })

  it(`fewer than ${MIN_OTHERS_ACCEPTED} requests of other operations accepted: too little to tell, the client's`, () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: MIN_OTHERS_ACCEPTED - 1 })
    refuse(scopes, LOGIN, T0 + 600)
    expect(refuse(scopes, LOGIN, T0 + 800)).toBe('client')
  })

  it("the traffic the client's limit mostly carries (an export's pages, accepted between its 429s) stays the client's, however the others fare", () => {
    const scopes = new LimitScopes()
    answer(scopes, LOGIN, { at: T0, count: 5, everyMs: 200 })
    answer(scopes, LIST, { at: T0, count: 90 })
    expect(refuse(scopes, LIST, T0 + 950)).toBe('client')
    expect(refuse(scopes, LIST, T0 + 960)).toBe('client')
  })

  it("429s of requests sent before the operation's last 429 came back are that same touch of the limit: judged as it was (a burst of login calls refused together)", () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: 50 })
    expect(refuse(scopes, LOGIN, T0 + 600)).toBe('client')
    // 19 more of the same burst, sent at T0 + 590 with the first, come back while the lists are accepted.
    for (let i = 1; i < 20; i++) {
      answer(scopes, LIST, { at: T0 + 600 + i, count: 1 })
      expect(scopes.refused(LOGIN, T0 + 590, T0 + 600 + i)).toBe('client')
    }
    // The next one, sent after they came back, is judged.
    expect(refuse(scopes, LOGIN, T0 + 900)).toBe('operation')
  })

  it("the window reaches back over the operation's last Retry-After: two 429s of one caller 5 s apart are judged together", () => {
    const scopes = new LimitScopes()
    expect(refuse(scopes, LOGIN, T0 + 600, 5_000)).toBe('client')
    answer(scopes, LIST, { at: T0 + 1_000, count: 50, everyMs: 80 })
    expect(refuse(scopes, LOGIN, T0 + 5_700, 5_000)).toBe('operation')
    // Without the Retry-After, the first 429 is out of the 3 s window: one 429 alone, the client's.
    const short = new LimitScopes()
    refuse(short, LOGIN, T0 + 600)
    answer(short, LIST, { at: T0 + 1_000, count: 50, everyMs: 80 })
    expect(refuse(short, LOGIN, T0 + 5_700)).toBe('client')
  })

  it('answers counted before the clock stepped back (seconds after now) are not in the window', () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0 + 3_600_000, count: 50 })
    refuse(scopes, LOGIN, T0 + 600)
    // Back at T0: the lists' answers are an hour ahead, so none was accepted in this window.
    expect(refuse(scopes, LOGIN, T0 + 800)).toBe('client')
  })

  it(`answers older than the window (${WINDOW_MS} ms) do not count`, () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: 50 })
    refuse(scopes, LOGIN, T0 + 600)
    // The lists were accepted before the window that ends at the second 429.
    expect(refuse(scopes, LOGIN, T0 + 600 + WINDOW_MS + 1_000)).toBe('client')
  })

  it(`once judged its own, the operation's next 429 stays so for ${KEPT_MS} ms while the others are accepted, even alone in the window; an others' 429 ends it`, () => {
    const scopes = new LimitScopes()
    answer(scopes, LIST, { at: T0, count: 50 })
    refuse(scopes, LOGIN, T0 + 600)
    expect(refuse(scopes, LOGIN, T0 + 800)).toBe('operation')
    // 4 s on: the window holds this 429 alone and an accepted login; the lists still flow.
    answer(scopes, LOGIN, { at: T0 + 4_500, count: 1 })
    answer(scopes, LIST, { at: T0 + 4_000, count: 50 })
    expect(refuse(scopes, LOGIN, T0 + 4_800)).toBe('operation')
    // Then the lists meet 429s as often as the login calls: the client's limit after all.
    answer(scopes, LIST, { at: T0 + 5_000, count: 50, refused: true })
    expect(refuse(scopes, LOGIN, T0 + 5_600)).toBe('client')
    // And the verdict is earned again from scratch (one 429 of the login calls in a window is not enough).
    answer(scopes, LIST, { at: T0 + 12_000, count: 50 })
    expect(refuse(scopes, LOGIN, T0 + 12_600)).toBe('client')
  })
})

describe('untested: the other operations waited through the window, unanswered', () => {
  /** A 429 of the login calls at `at`, while a request of another operation has waited for a turn since `waitingSince`. */
  function refuseWhileOthersWait(scopes: LimitScopes, at: number, waitingSince: number | undefined): string {
    return scopes.refused(LOGIN, at - 10, at, { othersWaitingSince: waitingSince })
  }

  it(`a 429 of the operation that took every turn while another's request waited ${WINDOW_MS} ms is its own, even its first`, () => {
    const scopes = new LimitScopes()
    answer(scopes, LOGIN, { at: T0, count: 3, everyMs: 900 })
    expect(refuseWhileOthersWait(scopes, T0 + 3_000, T0)).toBe('operation')
  })

  it('not while the others waited less than the window, nor when none waits', () => {
    const scopes = new LimitScopes()
    answer(scopes, LOGIN, { at: T0, count: 3, everyMs: 900 })
    expect(refuseWhileOthersWait(scopes, T0 + 3_000, T0 + 1)).toBe('client')
    expect(refuseWhileOthersWait(scopes, T0 + 3_500, undefined)).toBe('client')
  })

  it(`not when other operations had ${MIN_OTHERS_ACCEPTED} requests accepted in the window, or one refused: their answers judge, as for any 429`, () => {
    const accepted = new LimitScopes()
    answer(accepted, LIST, { at: T0 + 2_000, count: MIN_OTHERS_ACCEPTED })
    expect(accepted.refused(LOGIN, T0 + 2_990, T0 + 3_000, { othersWaitingSince: T0 })).toBe('client')
    const refused = new LimitScopes()
    answer(refused, LIST, { at: T0 + 2_000, count: 1, refused: true })
    expect(refused.refused(LOGIN, T0 + 2_990, T0 + 3_000, { othersWaitingSince: T0 })).toBe('client')
  })

  it("one request of another operation accepted in the window (a user's list now and then) is too little to judge by: still the guess", () => {
    const scopes = new LimitScopes()
    answer(scopes, 'conversations.list', { at: T0 + 1_000, count: 1 })
    expect(scopes.refused(LOGIN, T0 + 2_990, T0 + 3_000, { othersWaitingSince: T0 })).toBe('operation')
  })

  it(`proved wrong by the others' 429s, it is not made again for ${untestedAfterMs(1)} ms, then ${untestedAfterMs(2)} ms after a second time, up to ${untestedAfterMs(9)} ms`, () => {
    const scopes = new LimitScopes()
    let at = T0
    const wrongAgain = (): void => {
      expect(refuseWhileOthersWait(scopes, at + 3_000, at)).toBe('operation')
      // The others, given turns, meet 429s in the same second as the login calls: the client's limit.
      answer(scopes, LIST, { at: at + 3_500, count: 20 })
      answer(scopes, LIST, { at: at + 3_700, count: 5, refused: true })
      expect(refuseWhileOthersWait(scopes, at + 3_800, undefined)).toBe('client')
    }
    wrongAgain()
    // Proved wrong at `at + 3_800`: within the next minute the others wait unanswered again, in vain.
    expect(refuseWhileOthersWait(scopes, at + 3_800 + untestedAfterMs(1), at + 3_800 + untestedAfterMs(1) - WINDOW_MS)).toBe('client')
    at += untestedAfterMs(1) + 1_000
    wrongAgain()
    expect(refuseWhileOthersWait(scopes, at + 3_800 + untestedAfterMs(2), at + 3_800 + untestedAfterMs(2) - WINDOW_MS)).toBe('client')
    at += untestedAfterMs(2) + 1_000
    expect(refuseWhileOthersWait(scopes, at + 3_000, at)).toBe('operation')
    expect([1, 2, 3, 4, 9].map(untestedAfterMs)).toEqual([60_000, 120_000, 240_000, 480_000, 480_000])
  })

  it("a guess the operation's next 429 does not bear out by the answers counts as wrong, though the others met no 429 (they sent too little to tell)", () => {
    const scopes = new LimitScopes()
    expect(refuseWhileOthersWait(scopes, T0 + 3_000, T0)).toBe('operation')
    // 7 s on: nobody else answered, nobody waits. Too little to call it the login calls' own.
    expect(refuseWhileOthersWait(scopes, T0 + 10_000, undefined)).toBe('client')
    // Wrong, then: half a minute on, the others waiting unanswered again are no reason to guess.
    expect(refuseWhileOthersWait(scopes, T0 + 40_000, T0 + 36_000)).toBe('client')
  })

  it("a guess is proved wrong by the operation's next 429 however late it comes (70 s on, past the kept verdict)", () => {
    const scopes = new LimitScopes()
    expect(refuseWhileOthersWait(scopes, T0 + 3_000, T0)).toBe('operation')
    answer(scopes, LIST, { at: T0 + 73_000, count: 20 })
    answer(scopes, LIST, { at: T0 + 73_200, count: 5, refused: true })
    expect(refuseWhileOthersWait(scopes, T0 + 73_300, undefined)).toBe('client')
    // Proved wrong: half a minute on, the others waiting unanswered again are no reason to guess.
    expect(refuseWhileOthersWait(scopes, T0 + 103_300, T0 + 100_000)).toBe('client')
  })

  it(`wrong guesses are forgotten ${FORGET_MS} ms after the last: the next wrong one counts as the first`, () => {
    const scopes = new LimitScopes()
    const wrongAt = (at: number): void => {
      expect(refuseWhileOthersWait(scopes, at + 3_000, at)).toBe('operation')
      answer(scopes, LIST, { at: at + 3_500, count: 20 })
      answer(scopes, LIST, { at: at + 3_700, count: 5, refused: true })
      expect(refuseWhileOthersWait(scopes, at + 3_800, undefined)).toBe('client')
    }
    wrongAt(T0)
    const later = T0 + 3_800 + FORGET_MS + 1_000
    wrongAt(later)
    // A second wrong guess within FORGET_MS would hold the next for 120 s; this one, for 60 s.
    expect(refuseWhileOthersWait(scopes, later + 3_800 + 61_000, later + 3_800 + 61_000 - WINDOW_MS)).toBe('operation')
  })
})

describe('a verdict of its own, while the operation is paced on its own', () => {
  it(`stands past ${KEPT_MS} ms while the operation is paced on its own (its pace keeps it from 429s); not once it is not, nor once the others meet 429s`, () => {
    const scopes = new LimitScopes()
    answer(scopes, LOGIN, { at: T0, count: 50 })
    refuse(scopes, LIST, T0 + 600)
    expect(refuse(scopes, LIST, T0 + 800)).toBe('operation')
    // 2 minutes on, a page refused among 20 accepted, the login calls accepted: paced on its own, still its own.
    answer(scopes, LIST, { at: T0 + 120_000, count: 20, everyMs: 40 })
    answer(scopes, LOGIN, { at: T0 + 120_000, count: 10, everyMs: 80 })
    expect(scopes.refused(LIST, T0 + 120_890, T0 + 120_900, { paced: true })).toBe('operation')
    // The same 2 minutes later, its pace ended: a share of 1 in 21 is the client's.
    answer(scopes, LIST, { at: T0 + 240_000, count: 20, everyMs: 40 })
    answer(scopes, LOGIN, { at: T0 + 240_000, count: 10, everyMs: 80 })
    expect(scopes.refused(LIST, T0 + 240_890, T0 + 240_900)).toBe('client')
    // Judged its own again, then paced, with a login call refused beside it: the client's.
    refuse(scopes, LIST, T0 + 300_600)
    answer(scopes, LOGIN, { at: T0 + 300_000, count: 50 })
    expect(refuse(scopes, LIST, T0 + 300_800)).toBe('operation')
    answer(scopes, LIST, { at: T0 + 420_000, count: 20, everyMs: 40 })
    answer(scopes, LOGIN, { at: T0 + 420_000, count: 10, everyMs: 80 })
    refuse(scopes, LOGIN, T0 + 420_850)
    expect(scopes.refused(LIST, T0 + 420_890, T0 + 420_900, { paced: true })).toBe('client')
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

describe("an operation's own pace", () => {
  const THE_429: ReceivedResponse = {
    status: 429,
    success: false,
    headers: { 'retry-after': '1' },
    body: Buffer.alloc(0),
    truncated: false,
  }

  /** A clock whose time the test sets; timers are never run (the lanes' turns are read with tryTake). */
  function manualClock(start: number): Clock & { at: number } {
    return {
      at: start,
      now() {
        return this.at
      },
      setTimeout: () => undefined,
      clearTimeout: () => undefined,
    }
  }

  it("holds its calls for its 429's Retry-After, and says what is left of the hold and which 429 started it", () => {
    const clock = manualClock(T0)
    const pace = new OperationPace(clock)
    pace.refused(T0 - 10, T0, 1_000, THE_429, 'interactive')
    expect(pace.heldFor(T0 + 400)).toEqual({ ms: 600, response: THE_429 })
    clock.at = T0 + 999
    expect(pace.tryTake('interactive')).toBe(false) // held for the Retry-After
    clock.at = T0 + 1_100
    expect(pace.heldFor(T0 + 1_100)).toBeUndefined()
    // Then at its own rate, from the least (nothing of it was counted before): a token each 2 s.
    clock.at = T0 + 2_500
    expect(pace.tryTake('interactive')).toBe(true)
  })

  it("an export's pages after a hold: nothing saved up while it lasted, so they go at the pace, not at once; login calls keep what was saved", () => {
    const clock = manualClock(T0)
    const pages = new OperationPace(clock)
    // Held 10 s by a page's 429, at the least rate (a token each 2 s; a batch request needs 2, one
    // being the interactive reserve): the bucket would have filled to its 3 during the hold.
    pages.refused(T0 - 10, T0, 10_000, THE_429, 'batch')
    clock.at = T0 + 10_000
    expect(pages.tryTake('batch')).toBe(false) // not at the hold's end (two went at once before)
    clock.at = T0 + 14_000
    expect(pages.tryTake('batch')).toBe(true) // the bucket filled from empty at the hold's end
    expect(pages.tryTake('batch')).toBe(false) // one, not two
    // A login call's 429 (interactive): its bucket is kept, so the calls waiting go at the hold's end.
    const logins = new OperationPace(clock)
    logins.refused(T0 + 13_990, T0 + 14_000, 10_000, THE_429, 'interactive')
    clock.at = T0 + 24_000
    expect(logins.tryTake('interactive')).toBe(true)
    expect(logins.tryTake('interactive')).toBe(true)
  })

  it('refused with nothing accepted since it was lowered: held 250 ms, then 500 ms, doubling (a closed window), not probed into', () => {
    const clock = manualClock(T0)
    const pace = new OperationPace(clock)
    pace.refused(T0 - 10, T0, 0, THE_429, 'interactive')
    clock.at = T0 + 200
    pace.sent(T0 + 200)
    pace.refused(T0 + 200, T0 + 210, 0, THE_429, 'interactive')
    clock.at = T0 + 459
    expect(pace.tryTake('interactive')).toBe(false)
    clock.at = T0 + 700
    pace.sent(T0 + 700)
    pace.refused(T0 + 700, T0 + 710, 0, THE_429, 'interactive')
    clock.at = T0 + 1_209
    expect(pace.tryTake('interactive')).toBe(false)
  })
})

describe('a bucket drained until the end of a hold (lanes.ts LocalTokens.drain)', () => {
  it('gives nothing before that end, keeps the latest end, and counts its next token from it', () => {
    const tokens = new LocalTokens(() => 100, T0) // 100 a second: a token each 10 ms
    tokens.drain(T0, T0 + 5_000)
    expect(tokens.take('interactive', T0 + 100)).toBe(false) // 10 tokens' worth of time, all inside the hold
    expect(tokens.nextAt('interactive', T0 + 100)).toBe(T0 + 5_010)
    // A shorter hold after it, and a plain drain (a lowering) during it, move nothing earlier.
    tokens.drain(T0 + 200, T0 + 1_000)
    tokens.drain(T0 + 300)
    expect(tokens.nextAt('interactive', T0 + 300)).toBe(T0 + 5_010)
    expect(tokens.take('interactive', T0 + 5_009)).toBe(false)
    expect(tokens.take('interactive', T0 + 5_010)).toBe(true)
    expect(tokens.take('interactive', T0 + 5_010)).toBe(false) // one, nothing saved up
  })

  it('with no rate (an own pace that ended), the next token is due at the end of the hold, not NaN (a 1 ms timer each turn)', () => {
    const tokens = new LocalTokens(() => Infinity, T0)
    tokens.drain(T0, T0 + 5_000)
    expect(tokens.nextAt('batch', T0 + 100)).toBe(T0 + 5_000)
  })
})
