/**
 * The client's rate limiter (src/internal/rate-limit/limiter.ts) driven directly, on fake timers:
 * what it tells the judgement of scope.ts (how long the other operations waited, for an untested
 * verdict: counted from the end of the client's last hold), and when an operation's own pace ends.
 * The rule's own cases are in pacing-scope.test.ts; what a user sees (an export that starts while
 * login calls meet their own limit, lists flowing while token issuance alone is refused) in
 * pacing.test.ts.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { PACING_CHANNEL, type PacingEvent } from '../../src/core/tracing.ts'
import type { ReceivedResponse } from '../../src/internal/exchange.ts'
import type { Priority } from '../../src/internal/rate-limit/lanes.ts'
import { RateLimits, type LimitedCall } from '../../src/internal/rate-limit/limiter.ts'
import { Redactor } from '../../src/internal/redact.ts'
import type { ResolvedOptions } from '../../src/internal/resolved-options.ts'
import { SdkLogger } from '../../src/internal/sdk-logger.ts'

const T0 = 1_800_000_000_000

const cleanups: (() => void)[] = []
afterEach(() => {
  vi.useRealTimers()
  for (const cleanup of cleanups.splice(0)) cleanup()
})

const REQUESTS = {
  login: { operation: 'auth.issueToken', method: 'POST', path: '/rest/v1/auth/token' },
  list: { operation: 'conversations.messages.list', method: 'GET', path: '/rest/v1/conversations/messages' },
  users: { operation: 'customerUsers.list', method: 'GET', path: '/rest/v1/customer-users' },
} as const
type Operation = keyof typeof REQUESTS

/** A client's rate limiter on fake timers, and calls of login and list to drive it with. */
function limiter() {
  vi.useFakeTimers({ now: T0 })
  const redactor = new Redactor('test-key-secret')
  const lines: string[] = []
  /** The fields of each `info` line, by its index in `lines`. */
  const fields: (Record<string, unknown> | undefined)[] = []
  const info = (message: string, at?: Record<string, unknown>): void => {
    lines.push(message)
    fields.push(at)
  }
  const log = new SdkLogger({ debug() {}, info, warn() {}, error() {} }, 'info', redactor)
  const options = { log, rateLimitPause: 'wait', maxRetries: 2 } as unknown as ResolvedOptions
  const limits = new RateLimits({ store: undefined, pacing: 'adaptive', redactor })
  /** A call of `operation`: login calls are interactive, the two lists batch (an export's pages), unless `priority` says otherwise. */
  const call = (operation: Operation, priority: Priority = operation === 'login' ? 'interactive' : 'batch'): LimitedCall => ({
    request: REQUESTS[operation],
    options,
    priority,
    signal: new AbortController().signal,
    left: () => Infinity,
    wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    abandoned: () => new Error('abandoned') as never,
    outOfTime: () => new Error('out of time') as never,
    pauseBudget: Infinity,
    refusedSince: undefined,
    refusals: 0,
    refused: false,
  })
  const events: PacingEvent[] = []
  const onEvent = (event: unknown): void => {
    events.push(event as PacingEvent)
  }
  subscribe(PACING_CHANNEL, onEvent)
  cleanups.push(() => unsubscribe(PACING_CHANNEL, onEvent))
  /** A request of `operation` sent now and answered 429 (asking for `retryAfter` seconds) at once. */
  const refuse = (operation: Operation, retryAfter?: string, priority?: Priority): void => {
    const refused = call(operation, priority)
    limits.refused(refused, tooMany(retryAfter), limits.sending(refused))
  }
  /**
   * The client's first 429 (a request of `operation`), then 5 calls of `other` accepted over 0.5 s:
   * the next 429 of `operation` is judged its own (scope.ts: refused at least half its answers,
   * the others accepted).
   */
  const refusedBesideOthers = async (operation: Operation, other: Operation): Promise<void> => {
    refuse(operation)
    for (let i = 0; i < 5; i++) {
      await vi.advanceTimersByTimeAsync(100)
      const accepted = call(other)
      limits.accepted(limits.sending(accepted), accepted)
    }
  }
  return { limits, call, refuse, refusedBesideOthers, lines, fields, events }
}

function tooMany(retryAfter?: string): ReceivedResponse {
  return {
    status: 429,
    success: false,
    headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
    body: Buffer.alloc(0),
    truncated: false,
  }
}

/** Admits `call` and reports whether it was let through (it may wait: see `granted`). */
function admitted(limits: RateLimits, call: LimitedCall): { granted: boolean } {
  const state = { granted: false }
  const wait = limits.admit(call)
  if (wait === undefined) state.granted = true
  else
    void wait.then(
      () => (state.granted = true),
      () => undefined,
    )
  return state
}

/** 10 calls made by `call` admitted at once, after a turn of the (fake) clock for those let through. */
async function tenAtOnce(limits: RateLimits, call: () => LimitedCall): Promise<{ granted: boolean }[]> {
  const calls = Array.from({ length: 10 }, () => admitted(limits, call()))
  await vi.advanceTimersByTimeAsync(0)
  return calls
}

/** How many of `calls` were let through. */
const grantedOf = (calls: readonly { granted: boolean }[]): number => calls.filter((one) => one.granted).length

describe('how long the other operations waited, for an untested verdict (limiter.ts)', () => {
  it("counts from the end of the client's last pause: the first login 429 after a 5 s Retry-After, lists waiting since before it, is the client's", async () => {
    const { limits, call, refuse } = limiter()
    // The client's first 429, a login call's, without Retry-After: paced from here on, at what little was accepted.
    refuse('login')
    expect(limits.pacedRate).toBeDefined()
    // Lists wait for turns of the lowered rate (batch: they leave the reserve to login calls).
    const lists = Array.from({ length: 10 }, () => admitted(limits, call('list')))
    expect(lists.some((list) => !list.granted)).toBe(true)
    // A list sent (as one granted a turn would be) meets a 429 asking for 5 s: the client's, which
    // pauses it; the lists still waiting stay in line through the pause.
    await vi.advanceTimersByTimeAsync(1_500)
    refuse('list', '5')
    expect(limits.pausedUntil).toBeDefined()
    // The pause over, a login call goes first and meets a 429 before any list is answered. The
    // lists have waited 6.5 s, but only 0.1 s of it for turns the login calls took: the client's
    // limit, which pauses the client again (taken for the login calls' own, it paused nothing).
    await vi.advanceTimersByTimeAsync(5_100)
    expect(limits.pausedUntil).toBeUndefined()
    const third = call('login')
    const turn = limits.admit(third)
    if (turn !== undefined) await Promise.race([turn, vi.advanceTimersByTimeAsync(100)])
    expect(lists.some((list) => !list.granted)).toBe(true)
    limits.refused(third, tooMany('1'), limits.sending(third))
    expect(limits.pausedUntil).toBeDefined()
  })

  it('a login 429 while lists have waited 3 s for turns the login calls took, none answered, is their own: nothing of the client is paused', async () => {
    const { limits, call, refuse } = limiter()
    refuse('login')
    const lists = Array.from({ length: 10 }, () => admitted(limits, call('list')))
    expect(lists.some((list) => !list.granted)).toBe(true)
    await vi.advanceTimersByTimeAsync(3_100)
    refuse('login', '1')
    expect(limits.pausedUntil).toBeUndefined()
  })

  it("a list whose wait was aborted waits no more: a login 429 10 s later, no list waiting, is the client's", async () => {
    const { limits, call, refuse } = limiter()
    refuse('login')
    const controller = new AbortController()
    const lists = Array.from({ length: 10 }, () => admitted(limits, { ...call('list'), signal: controller.signal }))
    expect(lists.some((list) => !list.granted)).toBe(true)
    controller.abort()
    await vi.advanceTimersByTimeAsync(10_000)
    refuse('login', '1')
    expect(limits.pausedUntil).toBeDefined()
  })

  it("a list that has had its turn waits no more: a login 429 10 s later, no list waiting, is the client's", async () => {
    const { limits, call, refuse } = limiter()
    refuse('login')
    const list = call('list')
    const turn = admitted(limits, list)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(turn.granted).toBe(true)
    limits.accepted(limits.sending(list), list)
    await vi.advanceTimersByTimeAsync(10_000)
    refuse('login', '1')
    expect(limits.pausedUntil).toBeDefined()
  })
})

describe('whose waits count, for an untested verdict (limiter.ts)', () => {
  it("an export's 429 while another export's pages waited 3 s behind it, in the same lane, is the client's", async () => {
    const { limits, call, refuse } = limiter()
    refuse('list')
    const users = Array.from({ length: 10 }, () => admitted(limits, call('users')))
    expect(users.some((page) => !page.granted)).toBe(true)
    await vi.advanceTimersByTimeAsync(3_100)
    // Batch, like the pages waiting: they wait their turns in order, not behind a lane that goes first.
    refuse('list', '1')
    expect(limits.pausedUntil).toBeDefined()
  })

  it("a login 429 while interactive calls of another operation waited 3 s, in the login calls' lane, is the client's", async () => {
    const { limits, call, refuse } = limiter()
    refuse('login')
    const users = Array.from({ length: 10 }, () => admitted(limits, call('users', 'interactive')))
    expect(users.some((list) => !list.granted)).toBe(true)
    await vi.advanceTimersByTimeAsync(3_100)
    refuse('login', '1')
    expect(limits.pausedUntil).toBeDefined()
  })

  it("an interactive call's 429 while only batch calls of its own operation waited 3 s is the client's", async () => {
    const { limits, call, refuse } = limiter()
    refuse('list', undefined, 'interactive')
    const pages = Array.from({ length: 10 }, () => admitted(limits, call('list')))
    expect(pages.some((page) => !page.granted)).toBe(true)
    await vi.advanceTimersByTimeAsync(3_100)
    refuse('list', '1', 'interactive')
    expect(limits.pausedUntil).toBeDefined()
  })
})

describe("an operation's own pace (limiter.ts)", () => {
  it("ends 10 s after its last 429 of its own: its next calls go at the client's rate, no longer at its own", async () => {
    const { limits, call, refuse, refusedBesideOthers, lines, events } = limiter()
    // The login calls' first 429 is the client's; their second, while lists are accepted, their own:
    // the login calls are paced on their own, and the client's lowering is given back.
    await refusedBesideOthers('login', 'list')
    refuse('login', '1')
    expect(limits.pausedUntil).toBeUndefined()
    expect(limits.pacedRate).toBeUndefined()
    // Said once, and why (it read "while requests succeed", then "no 429 for a while"); on
    // PACING_CHANNEL, pacing's end (it was 'raised' to no rate, then 'ended' again).
    expect(lines.filter((line) => line.includes('pacing: unpaced'))).toEqual([
      "chat-service-sdk: pacing: unpaced (the lowering by auth.issueToken's 429s given back: they are its own limit's)",
    ])
    expect(events.map((event) => [event.reason, event.rate === undefined])).toEqual([
      ['lowered', false],
      ['ended', true],
    ])
    // 5 s on, their own pace still holds them: of 10 login calls at once, a few go.
    await vi.advanceTimersByTimeAsync(5_000)
    const held = await tenAtOnce(limits, () => call('login'))
    expect(grantedOf(held)).toBeLessThan(10)
    // 11 s after their last 429, no other since: the pace has ended, and all 10 go at once.
    await vi.advanceTimersByTimeAsync(6_000)
    const freed = await tenAtOnce(limits, () => call('login'))
    expect(grantedOf(freed)).toBe(10)
  })
})

describe("an export's own pace, while it holds the export's pages back (limiter.ts)", () => {
  it('is not ended 10 s after its last 429 while its pages wait for turns; it ends 10 s after none has had to wait', async () => {
    const { limits, call, refuse, refusedBesideOthers } = limiter()
    // The export's pages: the first 429 is the client's; the second, while login calls are accepted
    // and none refused, the export's own: its pages are paced on their own.
    await refusedBesideOthers('list', 'login')
    refuse('list', '1')
    expect(limits.pacedRate).toBeUndefined() // the client's lowering given back
    // 5 s on, 10 pages at once: its pace lets a few through, and the rest wait for turns.
    await vi.advanceTimersByTimeAsync(5_000)
    const first = await tenAtOnce(limits, () => call('list'))
    expect(grantedOf(first)).toBeLessThan(10)
    // 11 s after the last 429, the pace still holds pages back (it did 6 s ago): of 10 more, not all go.
    await vi.advanceTimersByTimeAsync(6_000)
    const second = await tenAtOnce(limits, () => call('list'))
    expect(grantedOf(second)).toBeLessThan(10)
    // Once every page has had its turn and none has waited for 10 s, the pace ends: 10 go at once.
    await vi.advanceTimersByTimeAsync(60_000)
    expect([...first, ...second].every((page) => page.granted)).toBe(true)
    await vi.advanceTimersByTimeAsync(11_000)
    const third = await tenAtOnce(limits, () => call('list'))
    expect(grantedOf(third)).toBe(10)
  })
})

describe("an export's own pace after a Retry-After of its own (limiter.ts, own-pace.ts)", () => {
  it('lets no pages out at once when the hold ends: nothing was saved up during it', async () => {
    const { limits, call, refuse, refusedBesideOthers } = limiter()
    await refusedBesideOthers('list', 'login')
    // Its own 429, asking for 10 s: at its least rate (a token each 2 s) the bucket would fill
    // during the hold, and two pages went out at once at its end.
    refuse('list', '10')
    expect(limits.pacedRate).toBeUndefined() // judged its own
    await vi.advanceTimersByTimeAsync(10_000)
    const pages = await tenAtOnce(limits, () => call('list'))
    expect(grantedOf(pages)).toBe(0)
    // From the hold's end, at the pace: one page once the bucket has filled to a batch turn.
    await vi.advanceTimersByTimeAsync(4_000)
    expect(grantedOf(pages)).toBe(1)
  })
})

describe("an operation's own pace, as it is told (limiter.ts)", () => {
  const OWN_LINE =
    /^chat-service-sdk: pacing conversations\.messages\.list: ([\d.]+) requests\/s \(after a 429 of its own limit; the client's rate is not lowered\)$/

  it('is logged once a lowering, is what pacedRateOf gives for its operation while the client is unpaced, and is not on PACING_CHANNEL', async () => {
    const { limits, call, refusedBesideOthers, lines, events } = limiter()
    await refusedBesideOthers('list', 'login')
    // Two pages sent together, both refused: one touch of the export's own limit, one lowering, one line.
    const first = call('list')
    const second = call('list')
    const sentAt = limits.sending(first)
    limits.sending(second)
    limits.refused(first, tooMany('1'), sentAt)
    limits.refused(second, tooMany('1'), sentAt)
    const own = lines.filter((line) => line.startsWith('chat-service-sdk: pacing conversations.messages.list:'))
    expect(own).toEqual([expect.stringMatching(OWN_LINE)])
    // PACING_CHANNEL carries the client's rate only: its lowering, and its end when it was given back.
    expect(events.map((event) => event.reason)).toEqual(['lowered', 'ended'])
    // The client is unpaced (its lowering given back); the export's pages are paced at their own rate.
    expect(limits.pacedRate).toBeUndefined()
    const ownRate = limits.pacedRateOf('conversations.messages.list')
    expect(ownRate).toBeCloseTo(Number(OWN_LINE.exec(own[0]!)![1]), 0)
    expect(limits.pacedRateOf('auth.issueToken')).toBeUndefined()
    // 11 s on, no call made since and none of its pages held back: no longer its pages' pace, though
    // nothing ended it yet (that comes at its next call, and is logged then).
    await vi.advanceTimersByTimeAsync(11_000)
    expect(limits.pacedRateOf('conversations.messages.list')).toBeUndefined()
    const page = admitted(limits, call('list'))
    await vi.advanceTimersByTimeAsync(0)
    expect(page.granted).toBe(true)
    expect(lines.at(-1)).toBe('chat-service-sdk: pacing conversations.messages.list: unpaced (no 429 of its own lately)')
  })

  it('is logged raised once it has risen by a tenth since its last line, not at each rise', async () => {
    const { limits, call, refuse, refusedBesideOthers, lines, fields } = limiter()
    await refusedBesideOthers('list', 'login')
    refuse('list', '1')
    // 90 s of an export asking for a page each 50 ms (more than its pace gives: pages wait for
    // turns, so the pace holds on), each page accepted as soon as it is sent: the pace climbs.
    for (let t = 0; t < 90_000; t += 50) {
      const page = call('list')
      const answer = (): void => {
        limits.accepted(limits.sending(page), page)
      }
      const turn = limits.admit(page)
      if (turn === undefined) answer()
      else void turn.then(answer, () => undefined)
      await vi.advanceTimersByTimeAsync(50)
    }
    // The export's own lines: why, and the rate each gives (its `pacedRate` field, unrounded).
    const own = lines.flatMap((line, i) => {
      const match = /^chat-service-sdk: pacing conversations\.messages\.list: [\d.]+ requests\/s \((.*)\)$/.exec(line)
      return match === null ? [] : [{ why: match[1], rate: fields[i]?.['pacedRate'] as number }]
    })
    expect(own[0]?.why).toBe("after a 429 of its own limit; the client's rate is not lowered")
    const raised = own.slice(1)
    expect(raised.length).toBeGreaterThanOrEqual(2)
    expect(raised.every((line) => line.why === 'while requests succeed')).toBe(true)
    // Each line a tenth above the one before it.
    for (let i = 1; i < own.length; i++) expect(own[i]!.rate).toBeGreaterThanOrEqual(own[i - 1]!.rate * 1.1)
  })

  it("pacedRateOf is the lower of the client's rate and the operation's own", async () => {
    const { limits, call, refuse, refusedBesideOthers } = limiter()
    // The client paced by a users' list 429 (a first 429 is the client's), after 50 of them accepted in 1 s.
    for (let i = 0; i < 50; i++) {
      await vi.advanceTimersByTimeAsync(20)
      const users = call('users')
      limits.accepted(limits.sending(users), users)
    }
    refuse('users')
    expect(limits.pacedRate).toBeGreaterThan(10)
    // 4 s on (that 429 out of the window), the message pages' own limit, judged (their 429s at half
    // their answers, the login calls accepted): their own pace is below the client's, and is what
    // pacedRateOf gives for them.
    await vi.advanceTimersByTimeAsync(4_000)
    await refusedBesideOthers('list', 'login')
    refuse('list', '1')
    const own = limits.pacedRateOf('conversations.messages.list')!
    expect(limits.pacedRate).toBeDefined()
    expect(own).toBeLessThan(limits.pacedRate!)
    // For the login calls, the client's.
    expect(limits.pacedRateOf('auth.issueToken')).toBe(limits.pacedRate)
  })
})

describe("an export's verdict of its own, while its pace holds its pages back (limiter.ts, scope.ts)", () => {
  it('a page refused 70 s after the verdict, at a low share, is still its own while its pace holds pages back: the client is not lowered', async () => {
    const { limits, call, refuse, refusedBesideOthers } = limiter()
    await refusedBesideOthers('list', 'login')
    refuse('list', '1')
    expect(limits.pacedRate).toBeUndefined()
    // 70 s of pages, 10 at a time every 5 s: its pace holds some back each time, and meets no 429.
    for (let i = 0; i < 14; i++) {
      await vi.advanceTimersByTimeAsync(5_000)
      for (let j = 0; j < 10; j++) admitted(limits, call('list'))
      await vi.advanceTimersByTimeAsync(0)
    }
    // Then, with login calls and pages accepted, one page refused: 1 in 6 of its answers.
    for (let i = 0; i < 5; i++) {
      const login = call('login')
      limits.accepted(limits.sending(login), login)
      const page = call('list')
      limits.accepted(limits.sending(page), page)
    }
    refuse('list', '1')
    expect(limits.pacedRate).toBeUndefined() // its own: the client's rate not lowered
    expect(limits.pausedUntil).toBeUndefined()
  })
})
