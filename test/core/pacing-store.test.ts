/**
 * Pacing shared through a `rateLimitStore` with `take` (issue 27): the learned rate and its budget
 * are one for every client of the store (as for workers in several processes); a store that
 * fails, hangs or answers nonsense degrades to each process pacing on its own, logged once, never
 * a failed call. Against the fake's limiter (listen mode) and a loopback server, with the in-memory
 * store of test/helpers/memory-store.ts (the contract of `take`, to the letter).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  ChatServiceClient,
  ChatServiceError,
  PACING_CHANNEL,
  RequestValidationError,
  type ClientOptions,
  type PacingEvent,
  type RateLimitStore,
} from 'chat-service-sdk'
import { BETA } from '../../src/internal/rate-limit/learner.ts'
import { createFakeChatService, generateDataset, type FakeChatService, type FakeServerHandle } from 'chat-service-sdk/testing'
import { KEY_ID, KEY_SECRET, agent, tokenResponse } from '../helpers/fixtures.ts'
import { startLoopback, untilAnswered, type LoopbackServer } from '../helpers/loopback.ts'
import { memoryStore } from '../helpers/memory-store.ts'
import { ACCEPTED_BEFORE_429, acceptSome, onFakeClock } from '../helpers/pacing.ts'

const closers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})

/** A client of the loopback server, closed after the test; `options` over the defaults (nothing logged). */
function loopbackClient(server: Pick<LoopbackServer, 'origin'>, options: Partial<ClientOptions> = {}): ChatServiceClient {
  const client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off', ...options })
  closers.push(() => client.close())
  return client
}

const page = { body: { data: [agent(1)], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } } } as const
const refused = { status: 429, body: { error: 'slow down' } } as const

function recorder(): { lines: string[]; logger: NonNullable<ClientOptions['logger']> } {
  const lines: string[] = []
  const log = (message: string): void => {
    lines.push(message)
  }
  return { lines, logger: { debug: log, info: log, warn: log, error: log } }
}

async function limitedFake(): Promise<{ fake: FakeChatService; server: FakeServerHandle }> {
  const fake = createFakeChatService({
    seed: generateDataset({ seed: 5, conversations: 16, messages: 1_000 }),
    rateLimit: { requestsPerSecond: 80, burst: 10, retryAfter: 'none' },
    compression: false, // under onFakeClock: zlib's thread pool would move its fake clock with the machine's load
  })
  const server = await fake.listen()
  closers.push(() => server.close())
  return { fake, server }
}

function clientOf(server: FakeServerHandle, options: Partial<ClientOptions>): ChatServiceClient {
  const client = new ChatServiceClient({ ...server.clientOptions(), logLevel: 'off', ...options })
  closers.push(() => client.close())
  return client
}

/** Every message of the shard, as a worker exports it. */
async function exportShard(client: ChatServiceClient, index: number): Promise<string[]> {
  const seen: string[] = []
  for await (const message of client.conversations.messages.listAll({ limit: 10, concurrency: 8, shard: { index, count: 2 } })) {
    seen.push(message.id)
  }
  return seen
}

describe('two clients sharing a store with take', () => {
  it('a rate one of them learned from a 429 paces the other, which never met one', async () => {
    const server = await startLoopback()
    closers.push(() => server.close())
    let seen = 0
    server.respond(() =>
      seen++ === 0
        ? { status: 429, body: { error: 'slow down' } }
        : { body: { data: [agent(1)], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } } },
    )
    const store = memoryStore()
    const options = { baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off', rateLimitStore: store } as const
    const a = new ChatServiceClient(options)
    const b = new ChatServiceClient(options)
    closers.push(
      () => a.close(),
      () => b.close(),
    )
    await a.agents.list()
    expect(a.pacedRate).toBeGreaterThan(0)
    expect(store.learned).not.toBeNull() // A told the store
    expect(b.pacedRate).toBeUndefined()
    await b.agents.list() // B reads the store's rate before this call (not awaited: it paces from then on)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(b.pacedRate).toBeGreaterThan(0)
    expect(server.arrivals.filter((arrival) => arrival.target.startsWith('/rest/v1/agents'))).toHaveLength(3) // one 429, all others accepted
  })

  /**
   * The company's login path: a client of its own on the workers' store, whose rate (80 a second)
   * it has not read yet when its first request meets a 429. Its own count is one call: a first
   * estimate made from it (about 0.5 requests/s), newer than the workers' rate, would replace theirs
   * in the store, and every worker would adopt it (found with 4 simulated processes,
   * bench:pacing-simulate: a fixed window without Retry-After, 0.89 of the limit instead of 0.97).
   * Returns the login client, after one call that met one 429 and then succeeded.
   */
  async function loginAfterA429(store: RateLimitStore): Promise<{ login: ChatServiceClient; sentAt: number[] }> {
    const server = await startLoopback()
    closers.push(() => server.close())
    const sentAt: number[] = []
    server.respond(() => {
      sentAt.push(Date.now())
      return sentAt.length === 1 ? refused : { body: tokenResponse() }
    })
    const login = loopbackClient(server, {
      rateLimitStore: store,
    })
    await login.auth.issueToken({ userId: 'u-1' }) // a 429, then its retry (a lease, which would carry a rate it lowered)
    return { login, sentAt }
  }
  const workersRate = (): RateLimitStore.LearnedRate => ({ max: 80, at: Date.now(), recoveryMs: 3_000 })

  it("a client that waited out the store's pause reads the store's rate first: its 429 does not replace the workers' rate with its own count", async () => {
    const store = memoryStore()
    const shared = workersRate()
    store.learned = shared
    const pausedUntil = Date.now() + 200
    store.pausedUntil = pausedUntil
    const { login, sentAt } = await loginAfterA429(store)
    expect(sentAt[0]).toBeGreaterThanOrEqual(pausedUntil) // it did wait out the pause (else this test shows nothing)
    expect(store.learned).toEqual(shared)
    expect(login.pacedRate).toBeGreaterThan(40) // the workers' rate, adopted (0.8 × 80 and climbing)
  })

  it('a first 429 that comes back before the store has answered the read of its rate waits for that answer, not a first estimate of its own', async () => {
    const store = memoryStore()
    const shared = workersRate()
    store.learned = shared
    // A store slower than the service's 429 (a remote Redis): each answer 50 ms after the ask.
    const slow: RateLimitStore = {
      get: () => store.get(),
      set: (until) => store.set(until),
      take: async (request) => {
        await new Promise((resolve) => setTimeout(resolve, 50))
        return store.take(request)
      },
    }
    const { login } = await loginAfterA429(slow)
    await vi.waitFor(() => {
      expect(login.pacedRate).toBeGreaterThan(40) // the workers' rate, adopted once the read answered
    })
    expect(store.learned).toEqual(shared)
  })

  it('a rate lowered by a 429 is told to the store at once, not at the next lease a Retry-After puts off', async () => {
    // Found with 4 simulated processes sharing a 20/s limit: while the one that met the 429 sat out
    // its Retry-After, another whose request was in flight met its own and lowered the rate from its
    // older, higher one; the store kept that newer estimate (35 requests/s) and every process
    // adopted it (0.61 of the limit in 2 of 5 seeded runs; 0.90-0.92 in all 5 since).
    const server = await startLoopback()
    closers.push(() => server.close())
    server.respond(() => ({ status: 429, headers: { 'retry-after': '1' }, body: { error: 'slow down' } }))
    const store = memoryStore()
    const client = loopbackClient(server, {
      rateLimitStore: store,
      maxRetries: 0, // the call ends with its 429: no later lease of this client would carry the rate
    })
    await expect(client.agents.list()).rejects.toMatchObject({ status: 429 })
    await vi.waitFor(() => {
      expect(store.learned).not.toBeNull()
    })
    expect(store.learned!.max).toBeGreaterThan(0)
  })

  it("an interactive call's first lease may take the reserve: a login call that finds no token waits for one round trip to the store, not two", async () => {
    // The store holds only the reserve (batch traffic of other processes spent the rest): it grants
    // a lease that leaves no reserve, and nothing to one that keeps it.
    const server = await startLoopback()
    closers.push(() => server.close())
    server.respond((arrival) => (arrival.target.endsWith('/auth/token') ? { body: tokenResponse() } : page))
    const store = memoryStore()
    store.learned = { max: 80, at: Date.now(), recoveryMs: 3_000 }
    const takes: RateLimitStore.Take[] = []
    const reserveOnly: RateLimitStore = {
      get: () => store.get(),
      set: (until) => store.set(until),
      take: async (request) => {
        if (request.tokens > 0) takes.push(request)
        const grant = await store.take({ ...request, tokens: 0 })
        return { ...grant, tokens: request.tokens > 0 && request.reserve === 0 ? 1 : 0 }
      },
    }
    const login = loopbackClient(server, {
      rateLimitStore: reserveOnly,
    })
    await login.agents.list({ limit: 1 }) // reads the store's rate (not awaited): paced from its answer on
    await vi.waitFor(() => {
      expect(login.pacedRate).toBeGreaterThan(0)
    })
    takes.length = 0
    await login.auth.issueToken({ userId: 'u-1' })
    expect(takes).toHaveLength(1)
    expect(takes[0]).toMatchObject({ tokens: 1, reserve: 0 })
  })

  it('two workers exporting one company against one limit: every message once, and one budget between them', async () => {
    const { fake, server } = await limitedFake()
    const store = memoryStore(() => Date.now()) // read at each call: the faked clock below
    /** The tokens each worker was granted from the one store. */
    const granted = [0, 0]
    const workerStore = (worker: number): RateLimitStore => ({
      get: () => store.get(),
      set: (until) => store.set(until),
      take: async (request) => {
        const grant = await store.take(request)
        granted[worker]! += grant.tokens
        return grant
      },
    })
    // On a fake clock, the limiter's and the store's too (test/helpers/pacing.ts): the climb to the
    // limit takes seconds of it, not of the suite.
    const [first, second] = await onFakeClock(() =>
      Promise.all([
        exportShard(clientOf(server, { rateLimitStore: workerStore(0) }), 0),
        exportShard(clientOf(server, { rateLimitStore: workerStore(1) }), 1),
      ]),
    )
    const expected = fake.listConversations('comp_1').flatMap((c) => fake.listMessages('comp_1', c.id).map((m) => m.id))
    expect([...first, ...second].sort()).toEqual([...expected].sort())
    expect(new Set([...first, ...second]).size).toBe(expected.length)
    // Both spent the store's bucket: leases with tokens, from batch traffic (leaving the reserve),
    // each worker granted a share of it (a worker pacing on a bucket of its own is granted none).
    const leases = store.takes.filter((take) => take.tokens > 0)
    expect(leases.length).toBeGreaterThan(0)
    expect(leases.every((take) => take.reserve >= 1)).toBe(true)
    expect(granted[0]).toBeGreaterThan(10)
    expect(granted[1]).toBeGreaterThan(10)
    const refused = fake.requests.filter((r) => r.status === 429).length
    expect(refused).toBeLessThan(0.2 * fake.requests.length)
  })
})

describe('what the clients of a store learn together', () => {
  /** A accepted `calls` requests (told to the store); then B meets its first 429: the rate it lowered to (only B meets one). */
  async function firstRateOfB(counts: boolean, calls: number): Promise<{ rate: number; told: number | undefined }> {
    const server = await startLoopback()
    closers.push(() => server.close())
    let bSeen = 0
    server.respond((arrival) => (arrival.headers['x-client'] === 'b' && bSeen++ === 0 ? refused : page))
    const store = memoryStore()
    store.counts = counts
    let told: number | undefined
    const observed: RateLimitStore = {
      get: () => store.get(),
      set: (until) => store.set(until),
      maxAgeMs: 0,
      take: async (request) => {
        const grant = await store.take(request)
        told = grant.acceptedPerSecond ?? undefined
        return grant
      },
    }
    const options = { baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off', rateLimitStore: observed } as const
    const a = new ChatServiceClient(options)
    const b = new ChatServiceClient({ ...options, headers: { 'x-client': 'b' } })
    closers.push(
      () => a.close(),
      () => b.close(),
    )
    for (let i = 0; i < calls; i++) await a.agents.list()
    await a.agents.list() // tells the store the last of them (each take carries the count since the one before)
    let lowered: number | undefined
    const onEvent = (event: unknown): void => {
      if ((event as PacingEvent).reason === 'lowered') lowered ??= (event as PacingEvent).rate
    }
    subscribe(PACING_CHANNEL, onEvent)
    try {
      await b.agents.list() // its first 429 (B had accepted nothing), then accepted
    } finally {
      unsubscribe(PACING_CHANNEL, onEvent)
    }
    return { rate: lowered ?? 0, told }
  }

  it("a client's first 429 starts from what all of them accepted (acceptedPerSecond), not from its own share", async () => {
    const { rate, told } = await firstRateOfB(true, 40)
    expect(told).toBeGreaterThan(5) // A's 40 calls, in about the last second (fewer on a slow machine)
    expect(rate).toBeGreaterThanOrEqual(0.8 * told! * 0.95) // BETA × the store's sum, give or take the time since its last answer
  })

  /**
   * A (asking the store before every request) and B (asking it at its first request, then not for
   * 60 s: it tells none of its own), one store; B's request number `refusedAt` is a 429. `toldB()`:
   * what the store first answered B (its sum of all of them).
   */
  async function aAndB(refusedAt: number): Promise<{ a: ChatServiceClient; b: ChatServiceClient; toldB: () => number | undefined }> {
    const server = await startLoopback()
    closers.push(() => server.close())
    let bSeen = 0
    server.respond((arrival) => (arrival.headers['x-client'] === 'b' && ++bSeen === refusedAt ? refused : page))
    const store = memoryStore()
    let toldB: number | undefined
    const observed = (maxAgeMs: number, b = false): RateLimitStore => ({
      get: () => store.get(),
      set: (until) => store.set(until),
      maxAgeMs,
      take: async (request) => {
        const grant = await store.take(request)
        if (b) toldB ??= grant.acceptedPerSecond ?? undefined
        return grant
      },
    })
    const a = loopbackClient(server, { rateLimitStore: observed(0) })
    const b = loopbackClient(server, { rateLimitStore: observed(60_000, true), headers: { 'x-client': 'b' } })
    return { a, b, toldB: () => toldB }
  }

  it("the first 429's estimate adds what this client accepted since it last told the store (the store's sum does not hold it yet)", async () => {
    // B's 12th request is its first 429: 11 accepted before it, of which the store heard of none.
    const { a, b, toldB } = await aAndB(12)
    for (let i = 0; i < 40; i++) await a.agents.list()
    await a.agents.list()
    for (let i = 0; i < 12; i++) await b.agents.list() // the last: the 429, then accepted
    const group = toldB()!
    expect(group).toBeGreaterThan(5)
    // BETA × (the store's sum + B's 11 untold), give or take the time since; without them, BETA × the sum.
    expect(b.pacedRate!).toBeGreaterThanOrEqual(0.8 * (group + 11) * 0.95)
  })

  it("a first estimate made before the store had the others' counts is raised to their sum while its Retry-After lasts", async () => {
    // Found with 4 simulated processes: at an export's start each met the limit within a few ms of
    // the others, before any had told the store its count; the last first estimate (one process's
    // share, 4 requests/s against a limit of 100) was the newest, and all of them probed up from it.
    const server = await startLoopback()
    closers.push(() => server.close())
    const refusing = new Set<string>()
    server.respond((arrival) =>
      refusing.has(String(arrival.headers['x-client']))
        ? { status: 429, headers: { 'retry-after': '1' }, body: { error: 'slow down' } }
        : page,
    )
    const store = memoryStore()
    /** What the store answered B's takes: the sum of what A and B told it. */
    let toldB: number | undefined
    const observed = (b: boolean): RateLimitStore => ({
      get: () => store.get(),
      set: (until) => store.set(until),
      maxAgeMs: 60_000, // read once, at the first request: neither tells the store its count before its 429
      take: async (request) => {
        const grant = await store.take(request)
        if (b) toldB = grant.acceptedPerSecond ?? undefined
        return grant
      },
    })
    // maxRetries 0: each call ends with its 429, so nothing later (a lease) tells the store anything.
    const a = loopbackClient(server, { rateLimitStore: observed(false), headers: { 'x-client': 'a' }, maxRetries: 0 })
    const b = loopbackClient(server, { rateLimitStore: observed(true), headers: { 'x-client': 'b' }, maxRetries: 0 })
    for (let i = 0; i < 20; i++) await a.agents.list()
    for (let i = 0; i < 5; i++) await b.agents.list()
    refusing.add('a').add('b')
    await expect(a.agents.list()).rejects.toMatchObject({ status: 429 }) // A's first estimate: its 20
    await vi.waitFor(() => {
      expect(store.learned?.max).toBeGreaterThan(10)
    })
    await expect(b.agents.list()).rejects.toMatchObject({ status: 429 }) // B's: its 5, told with A's 20 already counted
    await vi.waitFor(() => {
      expect(toldB).toBeGreaterThan(10) // more than B's own share: A's count is in the sum
      expect(store.learned!.max).toBeGreaterThanOrEqual(toldB!) // B's newer estimate, raised to the sum (without: B's 5)
    })
    expect(b.pacedRate).toBeGreaterThanOrEqual(0.8 * toldB!) // BETA × the sum, while the pause lasts
  })

  it("a store's count over a second old is not used for a first estimate: the other processes may have stopped since", async () => {
    const { a, b, toldB } = await aAndB(2)
    for (let i = 0; i < 40; i++) await a.agents.list()
    await a.agents.list()
    // Only Date moves (the pacer's and the store's clock): B's answer from the store is 1.5 s old at its 429.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() })
    try {
      await b.agents.list() // accepted; the store answers A's count
      expect(toldB()).toBeGreaterThan(5)
      vi.setSystemTime(Date.now() + 1_500)
      await b.agents.list() // its first 429, then accepted
    } finally {
      vi.useRealTimers()
    }
    // B's own share (1 request accepted): the least rate; with the old count, BETA × A's sum.
    expect(b.pacedRate).toBeLessThan(0.5 * toldB()!)
    expect(b.pacedRate).toBeLessThan(2)
  })

  it('with a store that does not count, it starts from its own share (the least rate, having accepted nothing)', async () => {
    const { rate, told } = await firstRateOfB(false, 40)
    expect(told).toBeUndefined()
    expect(rate).toBeCloseTo(0.5, 1) // the least rate, 0.8 of 0.625 (read as it is reported, a few ms into probing)
  })

  it('a 429 for a request sent before it adopted the rate another client lowered does not lower it again', async () => {
    const server = await startLoopback()
    closers.push(() => server.close())
    let aRefused = false
    let bRefused = false
    let arrived!: () => void
    const bSent = new Promise<void>((resolve) => (arrived = resolve))
    let answer!: () => void
    const bAnswered = new Promise<void>((resolve) => (answer = resolve))
    server.respond(async (arrival) => {
      if (arrival.headers['x-client'] !== 'b') {
        if (aRefused) return page
        aRefused = true
        return refused
      }
      if (!arrival.target.includes('limit=7') || bRefused) return page
      bRefused = true
      arrived() // B's request sent after A's decrease, before B heard of it: its 429 comes once B paces at A's rate
      await bAnswered
      return refused
    })
    const store = memoryStore()
    // B's store answers its takes only once its request is on the wire: B sends it unpaced.
    const slowTakes: RateLimitStore = {
      ...store,
      maxAgeMs: 0,
      take: async (request) => {
        await bSent
        return store.take(request)
      },
    }
    const options = { baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off' } as const
    const a = new ChatServiceClient({ ...options, rateLimitStore: store })
    const b = new ChatServiceClient({ ...options, rateLimitStore: slowTakes, headers: { 'x-client': 'b' } })
    closers.push(
      () => a.close(),
      () => b.close(),
    )
    await a.agents.list() // a 429, then accepted: A lowered the rate and told the store
    const lowered = store.learned
    expect(lowered).not.toBeNull()
    const early = b.agents.list({ limit: 7 })
    await bSent
    await expect.poll(() => b.pacedRate).toBeGreaterThan(0) // B adopted A's rate
    await b.agents.list() // and had a request accepted at it
    const before = b.pacedRate!
    answer()
    await early // B's early request: a 429, then accepted
    expect(store.learned).toEqual(lowered) // B lowered nothing (so told the store nothing newer)
    expect(b.pacedRate).toBeGreaterThanOrEqual(before)
  })
})

describe('a limit learned on a night before, kept by the store', () => {
  /** A client of a store that holds `learned`, whose first request is a 429 asking for 300 ms: the rate it paces at, and the store's learned rate after. */
  async function firstRateWith(
    learned: RateLimitStore.LearnedRate,
  ): Promise<{ rate: number | undefined; stored: RateLimitStore.LearnedRate | null }> {
    const server = await startLoopback()
    closers.push(() => server.close())
    let seen = 0
    server.respond(() => (seen++ === 0 ? { ...refused, headers: { 'retry-after-ms': '300' } } : page))
    const store = memoryStore()
    store.learned = learned
    const client = loopbackClient(server, { rateLimitStore: store })
    await client.agents.list() // its 429, 300 ms, then accepted
    return { rate: client.pacedRate, stored: store.learned }
  }

  it(`a limit learned a day ago: the first 429 climbs from it (from ${BETA} of it, after the wait) instead of probing up from what was accepted`, async () => {
    const lastNight = { max: 60, at: Date.now() - 86_400_000, recoveryMs: 20_000 }
    const before = Date.now()
    const { rate, stored } = await firstRateWith(lastNight)
    // Read a few ms into the climb, which starts at BETA × 60 = 48 (probing would start near the least rate: nothing was accepted).
    expect(rate).toBeGreaterThan(BETA * 60 - 0.5)
    expect(rate).toBeLessThan(60)
    // Told to the store for the other processes: the same limit, climbing from now.
    expect(stored).toMatchObject({ max: 60, recoveryMs: 3_000 })
    expect(stored!.at).toBeGreaterThanOrEqual(before)
  })

  it('one below what this run had accepted is stale (a night of 429s left it at the least rate): the first 429 probes up from what was accepted', async () => {
    const server = await startLoopback()
    closers.push(() => server.close())
    let seen = 0
    server.respond(() => (++seen === ACCEPTED_BEFORE_429 + 1 ? { ...refused, headers: { 'retry-after-ms': '300' } } : page))
    const store = memoryStore()
    store.learned = { max: 0.625, at: Date.now() - 86_400_000, recoveryMs: 20_000 }
    const client = loopbackClient(server, { rateLimitStore: store })
    await acceptSome(client) // 20 accepted in well under a second
    await client.agents.list() // its 429, 300 ms, then accepted
    // Probing up from 0.8 × 20 (or more: the store's count), where climbing from the stale limit paced at 0.85 × 0.625.
    expect(client.pacedRate).toBeGreaterThanOrEqual(0.8 * ACCEPTED_BEFORE_429)
    expect(store.learned).toMatchObject({ recoveryMs: 0 })
  })

  it('one learned over a week ago is not used: the first 429 probes up from what this run accepted', async () => {
    const { rate, stored } = await firstRateWith({ max: 60, at: Date.now() - 8 * 86_400_000, recoveryMs: 20_000 })
    expect(rate).toBeLessThan(2)
    expect(stored).toMatchObject({ recoveryMs: 0 })
  })
})

describe('a store that fails never fails a call', () => {
  it('take() throws from the middle of an export on: the export completes, paced by the process alone; one warn', async () => {
    const { fake, server } = await limitedFake()
    const store = memoryStore(() => Date.now()) // read at each call: the faked clock below
    const { lines, logger } = recorder()
    const client = clientOf(server, { rateLimitStore: store, logger, logLevel: 'warn' })
    let yielded = 0
    const seen: string[] = []
    await onFakeClock(async () => {
      for await (const message of client.conversations.messages.listAll({ limit: 10, concurrency: 8 })) {
        seen.push(message.id)
        if (++yielded === 400) store.failing = true
      }
    })
    const expected = fake.listConversations('comp_1').flatMap((c) => fake.listMessages('comp_1', c.id).map((m) => m.id))
    expect(seen).toEqual(expected)
    const warnings = lines.filter((line) => line.includes('rateLimitStore'))
    expect(warnings.filter((line) => line.includes('take() failed'))).toHaveLength(1)
    expect(warnings.join('\n')).not.toContain(KEY_SECRET)
  })

  it.each([
    ['hangs', (): Promise<never> => new Promise(() => undefined), 'has not answered in 250 ms'],
    ['answers more tokens than asked', () => Promise.resolve({ tokens: 1_000 }), 'not a RateLimitGrant'],
    ['answers a string', () => Promise.resolve('ok' as unknown as { tokens: number }), 'not a RateLimitGrant'],
    ['answers an acceptedPerSecond of -1', () => Promise.resolve({ tokens: 0, acceptedPerSecond: -1 }), 'not a RateLimitGrant'],
    [
      'answers a learned rate of NaN',
      () => Promise.resolve({ tokens: 0, learned: { max: Number.NaN, at: 1, recoveryMs: 0 } }),
      'not a RateLimitGrant',
    ],
    [
      // Taken, it held every process near the least rate (0.5 a second) for minutes of climbing back.
      'answers a learned rate of 0.01 a second',
      (request: RateLimitStore.Take) =>
        Promise.resolve({ tokens: request.tokens, learned: { max: 0.01, at: Date.now() - 1_000, recoveryMs: 20_000 } }),
      'the least any client paces at: no SDK stores one',
    ],
    [
      // A process whose clock is a day fast told it: adopted, it froze every process at 0.85 × 50 for a day.
      'answers a learned rate whose climb starts a day from now',
      (request: RateLimitStore.Take) =>
        Promise.resolve({ tokens: request.tokens, learned: { max: 50, at: Date.now() + 86_400_000, recoveryMs: 20_000 } }),
      "ahead of this process's clock",
    ],
  ])('take() that %s: calls go on (paced by the process alone), one warn', async (_name, take, warning) => {
    const server = await startLoopback()
    closers.push(() => server.close())
    // 20 accepted, then a 429: the rate starts near 20 a second.
    let seen = 0
    server.respond(() =>
      seen++ === 20
        ? { status: 429, body: { error: 'slow down' } }
        : { body: { data: [agent(1)], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } } },
    )
    const store: RateLimitStore = { get: () => 0, set: () => undefined, take }
    const { lines, logger } = recorder()
    const client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, rateLimitStore: store, logger })
    closers.push(() => client.close())
    for (let i = 0; i < 24; i++) await client.agents.list()
    // Paced from the 429 on, or (a 429 met while the first read of the store's rate was out) once
    // that read has failed: a store that hangs holds the first estimate back for its 250 ms at most.
    await vi.waitFor(() => {
      expect(client.pacedRate).toBeGreaterThan(0)
    })
    const warnings = lines.filter((line) => line.includes('take() failed'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(warning)
  })

  it('take() that grants no token however long it is asked: the calls wait on (the budget may be spent elsewhere), and one warn says so after 5 s', async () => {
    const server = await startLoopback()
    closers.push(() => server.close())
    let seen = 0
    server.respond(() => (seen++ === 20 ? refused : page))
    const store: RateLimitStore = { get: () => 0, set: () => undefined, take: () => Promise.resolve({ tokens: 0 }) }
    const { lines, logger } = recorder()
    const client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, rateLimitStore: store, logger })
    for (let i = 0; i < 20; i++) await client.agents.list()
    vi.useFakeTimers({ toNotFake: ['setImmediate', 'clearImmediate'], now: Date.now() })
    let pending: Promise<unknown> | undefined
    try {
      // Meets the 429, then waits for a token the store never grants.
      pending = Promise.resolve(client.agents.list()).catch((error: unknown) => error)
      for (let elapsed = 0; elapsed < 4_000; elapsed += 100) {
        await untilAnswered(server) // the 429 read before the clock moves on
        await vi.advanceTimersByTimeAsync(100)
      }
      expect(lines.filter((line) => line.includes('has granted no token'))).toEqual([])
      for (let elapsed = 0; elapsed < 3_000; elapsed += 100) {
        await untilAnswered(server) // the 429 read before the clock moves on
        await vi.advanceTimersByTimeAsync(100)
      }
    } finally {
      vi.useRealTimers()
    }
    const warnings = lines.filter((line) => line.includes('has granted no token'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/rateLimitStore\.take\(\) has granted no token for [\d,]+ ms while this process's requests waited/)
    expect(seen).toBe(21) // nothing sent without a token
    await client.close()
    expect(await pending).toBeInstanceOf(ChatServiceError)
  })

  it("a 429 met while the store is down lowers the rate from the rate paced, not from this process's share of the traffic", async () => {
    const server = await startLoopback()
    closers.push(() => server.close())
    let seen = 0
    // Slow answers: this client sends about 20 a second, a share of what the store's rate allows.
    server.respond(() => (++seen === 8 ? { status: 429, body: { error: 'slow down' } } : { ...page, delayMs: 50 }))
    const store = memoryStore()
    store.learned = { max: 200, at: Date.now(), recoveryMs: 3_000 } // the rate other processes found
    // The other processes are not real here: a count would be this one's share alone, and a paced 429
    // lowers the rate to what all processes accepted (pacing-arithmetic.test.ts).
    store.counts = false
    const client = loopbackClient(server, {
      rateLimitStore: store,
    })
    await client.agents.list()
    await expect.poll(() => client.pacedRate).toBeGreaterThan(100) // adopted from the store
    store.failing = true
    for (let i = 0; i < 7; i++) await client.agents.list() // the store fails: paced on its own; the 8th request is refused once
    expect(seen).toBe(9)
    // Lowered from about 200 (0.8 of it), not to 0.8 of the ~20 a second this process sent.
    expect(client.pacedRate).toBeGreaterThan(100)
  })

  it('a store whose take is not a function is a RequestValidationError', () => {
    expect(
      () =>
        new ChatServiceClient({
          baseUrl: 'https://chat.example.com',
          keyId: KEY_ID,
          keySecret: KEY_SECRET,
          rateLimitStore: { get: () => 0, set: () => undefined, take: 'yes' } as unknown as RateLimitStore,
        }),
    ).toThrow(RequestValidationError)
  })
})
