/**
 * One rate limit across processes (issue 17): the client-wide 429 pause shared through a
 * `rateLimitStore`, at a loopback server. Two clients made with `new` (as two processes would)
 * share an in-memory store: a 429 one of them meets pauses the other. A store that throws, rejects,
 * hangs or answers nonsense never fails a call (logged once, the process's own pause goes on);
 * `rateLimitPause: 'fail'`, `totalTimeout` and aborts treat a pause known only from the store like
 * one of the process's own; a store without get/set is refused at construction.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  APITimeoutError,
  APIUserAbortError,
  ChatServiceClient,
  RateLimitError,
  RequestValidationError,
  type ClientOptions,
  type RateLimitStore,
} from 'chat-service-sdk'
import { RATE_LIMIT_STORE_GET_TIMEOUT_MS } from '../../src/core/options.ts'
import { KEY_ID, KEY_SECRET, agent } from '../helpers/fixtures.ts'
import { recordingLogger, rejection, type LoopbackServer, type Reply, useLoopback } from '../helpers/loopback.ts'
import { acceptSome } from '../helpers/pacing.ts'

const PAGE = { data: [agent(1)], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } }
const RATE_LIMITED: Reply = { status: 429, headers: { 'retry-after': '1', 'x-request-id': 'r-429' }, body: { error: 'slow down' } }
/**
 * The same 429 asking for 300 ms (`retry-after-ms`), where what is shown is that the pause is kept,
 * not how long it is: the 1 s `Retry-After` (the header's least) stays in the sync store's case.
 */
const SHORT_PAUSE_MS = 300
const RATE_LIMITED_SHORT: Reply = {
  status: 429,
  headers: { 'retry-after-ms': String(SHORT_PAUSE_MS), 'x-request-id': 'r-429' },
  body: { error: 'slow down' },
}

let server: LoopbackServer
const clients: ChatServiceClient[] = []

useLoopback((started) => {
  server = started
})
beforeEach(() => {
  server.respond(() => ({ body: PAGE }))
})
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()))
})

function makeClient(extra: Partial<ClientOptions> = {}): ChatServiceClient {
  const client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off', ...extra })
  clients.push(client)
  return client
}

/** What Redis would be for two processes: one value, with every get and set counted. */
function memoryStore(kind: 'sync' | 'async', initial = 0): RateLimitStore & { value: number; gets: number; sets: number[] } {
  const store = {
    value: initial,
    gets: 0,
    sets: [] as number[],
    get(): number | Promise<number> {
      store.gets++
      if (kind === 'sync') return store.value
      return new Promise((resolve) => {
        setTimeout(() => {
          resolve(store.value)
        }, 2)
      })
    },
    set(until: number): void | Promise<void> {
      store.sets.push(until)
      store.value = Math.max(store.value, until)
      return kind === 'sync' ? undefined : Promise.resolve()
    },
  }
  return store
}

/** Answers the first request with `refusal` (by default a 429 with Retry-After: 1), the rest with a page. */
function rateLimitFirst(refusal: Reply = RATE_LIMITED): void {
  let seen = 0
  server.respond(() => (seen++ === 0 ? refusal : { body: PAGE }))
}

describe('two clients sharing a store', () => {
  it.each([
    ['sync', RATE_LIMITED, 1_000],
    ['async', RATE_LIMITED_SHORT, SHORT_PAUSE_MS],
  ] as const)(
    'a 429 client A meets makes client B wait until its Retry-After has passed, B sending nothing meanwhile (%s store)',
    async (kind, refusal, pauseMs) => {
      const store = memoryStore(kind)
      const a = makeClient({ rateLimitStore: store, maxRetries: 0 })
      const b = makeClient({ rateLimitStore: store })
      // B has read the store before A's 429: its next read is due 100 ms later, not never.
      expect((await b.agents.list()).data).toEqual(PAGE.data)
      server.clear()
      rateLimitFirst(refusal)

      const before = Date.now()
      expect(await rejection(a.agents.list())).toBeInstanceOf(RateLimitError)
      expect(store.sets).toHaveLength(1)
      expect(store.sets[0]).toBeGreaterThanOrEqual(before + pauseMs)
      expect(a.rateLimitedUntil?.getTime()).toBe(store.sets[0])
      const the429 = server.arrivals[0]!

      await new Promise((resolve) => setTimeout(resolve, 150))
      expect((await b.agents.list()).data).toEqual(PAGE.data)
      expect(server.arrivals).toHaveLength(2)
      expect(server.arrivals[1]!.at - the429.at).toBeGreaterThanOrEqual(0.9 * pauseMs)
    },
  )

  it('B knows the pause as soon as it has read the store: rateLimitedUntil, and a derived client shares it', async () => {
    const store = memoryStore('async')
    const a = makeClient({ rateLimitStore: store, maxRetries: 0 })
    rateLimitFirst()
    await rejection(a.agents.list())
    const b = makeClient({ rateLimitStore: store, rateLimitPause: 'fail' })
    expect(b.rateLimitedUntil).toBeUndefined() // not read yet: reading the property does not read the store
    await rejection(b.agents.list())
    expect(b.rateLimitedUntil?.getTime()).toBe(store.value)
    expect(b.withOptions({ timeout: 5_000 }).rateLimitedUntil?.getTime()).toBe(store.value)
    expect(server.arrivals).toHaveLength(1)
  })

  it('a derived client writes to its parent’s store; set is called only when a 429 makes the pause longer', async () => {
    const store = memoryStore('sync')
    const derived = makeClient({ rateLimitStore: store, maxRetries: 0 }).withOptions({ timeout: 10_000 })
    // Two calls in flight: the first 429 asks for 2 s, the second (answered later) for 1 s.
    let seen = 0
    server.respond(() =>
      seen++ === 0 ? { status: 429, headers: { 'retry-after': '2' }, body: 'slow down' } : { ...RATE_LIMITED, delayMs: 100 },
    )
    const results = await Promise.all([rejection(derived.agents.list()), rejection(derived.agents.list())])
    expect(results.every((error) => error instanceof RateLimitError)).toBe(true)
    expect(store.sets).toHaveLength(1)
    expect(derived.rateLimitedUntil?.getTime()).toBe(store.sets[0])
  })

  it('calls made while a read is out wait for it: one get, and the pause it brings stops all of them', async () => {
    let gets = 0
    const store: RateLimitStore = {
      get: async () => {
        gets++
        await new Promise((resolve) => setTimeout(resolve, 50))
        return Date.now() + 5_000
      },
      set: () => undefined,
    }
    const client = makeClient({ rateLimitStore: store })
    const results = await Promise.allSettled([1, 2, 3].map(() => client.agents.list({}, { rateLimitPause: 'fail' })))
    expect(results.map((result) => (result.status === 'rejected' ? (result.reason as Error).constructor.name : 'sent'))).toEqual([
      'RateLimitError',
      'RateLimitError',
      'RateLimitError',
    ])
    expect(gets).toBe(1)
    expect(server.arrivals).toHaveLength(0)
  })

  it('reads the store at most once per 100 ms, not once per call', async () => {
    const store = memoryStore('async')
    const client = makeClient({ rateLimitStore: store })
    const started = performance.now()
    for (let i = 0; i < 30; i++) await client.agents.list()
    const elapsed = performance.now() - started
    expect(store.gets).toBeGreaterThanOrEqual(1)
    expect(store.gets).toBeLessThanOrEqual(1 + Math.ceil(elapsed / 100))
  })
})

describe('maxAgeMs', () => {
  it('0: the store is read before every attempt, so a pause another process has just set stops the very next call', async () => {
    const store = Object.assign(memoryStore('async'), { maxAgeMs: 0 })
    const a = makeClient({ rateLimitStore: store })
    for (let i = 0; i < 5; i++) await a.agents.list()
    expect(store.gets).toBe(5)
    // Another process's 429, a moment ago (a short pause: what is shown is that the very next call
    // waits it out, not for how long; the 1 s pauses above show the length).
    store.value = Date.now() + 300
    const sent = server.arrivals.length
    const started = performance.now()
    await a.agents.list()
    expect(server.arrivals).toHaveLength(sent + 1)
    expect(server.arrivals.at(-1)!.at - started).toBeGreaterThanOrEqual(250)
  })

  it('a longer maxAgeMs reads it less often: calls 150 ms apart, past the default 100 ms, read it once', async () => {
    const longer = Object.assign(memoryStore('sync'), { maxAgeMs: 60_000 })
    const usual = memoryStore('sync')
    for (const store of [longer, usual]) {
      const client = makeClient({ rateLimitStore: store })
      for (let i = 0; i < 3; i++) {
        await client.agents.list()
        await new Promise((resolve) => setTimeout(resolve, 150))
      }
    }
    expect(longer.gets).toBe(1)
    expect(usual.gets).toBe(3) // the same calls with the default read it each time
  })
})

describe('a pause known only from the store', () => {
  it("rateLimitPause: 'fail' rejects with a RateLimitError that says the pause came from the shared store, nothing sent", async () => {
    const store = memoryStore('async', Date.now() + 5_000)
    const client = makeClient({ rateLimitStore: store })
    const error = await rejection(client.agents.list({}, { rateLimitPause: 'fail' }))
    expect(error).toBeInstanceOf(RateLimitError)
    const refused = error as RateLimitError
    expect(refused.status).toBe(429)
    expect(refused.retryAfterMs).toBeGreaterThan(4_000)
    expect(refused.retryAfterMs).toBeLessThanOrEqual(5_000)
    expect(refused.message).toContain('rateLimitStore')
    expect(refused.message).toContain('another process')
    expect(refused.message).toContain("rateLimitPause: 'fail'")
    expect(refused.retryable).toBe(true)
    expect(refused.body).toBeUndefined()
    expect(server.arrivals).toHaveLength(0)
  })

  it('a store pause longer than totalTimeout is not waited: APITimeoutError at once, nothing sent', async () => {
    const store = memoryStore('async', Date.now() + 30_000)
    const client = makeClient({ rateLimitStore: store })
    const error = await rejection(client.agents.list({}, { totalTimeout: 1_000 }))
    expect(error).toBeInstanceOf(APITimeoutError)
    expect((error as APITimeoutError).message).toContain('the client is paused after a 429 seen by another process (rateLimitStore)')
    expect(server.arrivals).toHaveLength(0)
  })

  it('a store pause 100 s ahead, longer than any the SDK sets but within the clocks allowance: taken, and said once at warn', async () => {
    const store = memoryStore('async', Date.now() + 100_000)
    const logger = recordingLogger()
    const client = makeClient({ rateLimitStore: store, logger, logLevel: 'warn' })
    expect(await rejection(client.agents.list({}, { totalTimeout: 1_000 }))).toBeInstanceOf(APITimeoutError)
    expect(await rejection(client.agents.list({}, { totalTimeout: 1_000 }))).toBeInstanceOf(APITimeoutError)
    const warned = logger.messages('warn').filter((line) => line.includes('rateLimitStore.get() answered a pause'))
    expect(warned).toHaveLength(1)
    expect(warned[0]).toMatch(/answered a pause [\d,]+ ms ahead, longer than any Retry-After the SDK waits for \(60,000 ms\): taken/)
    expect(server.arrivals).toHaveLength(0)
  })

  it('a store that pushes the pause on after every wait cannot hold a call forever: past 60 s of pause per try, RateLimitError, nothing sent', async () => {
    // Without totalTimeout. Faked timers (as TESTING.md says) stand in for the 40 s waits.
    vi.useFakeTimers({ toNotFake: ['setImmediate', 'clearImmediate'] })
    try {
      let gets = 0
      const store: RateLimitStore = {
        get: () => {
          gets++
          return Date.now() + 40_000
        },
        set: () => undefined,
        maxAgeMs: 0,
      }
      const client = makeClient({ rateLimitStore: store, maxRetries: 0 })
      const refused = rejection(client.agents.list())
      // One wait of 40 s fits the budget of one try (60 s); the store then says 40 s more again.
      await vi.advanceTimersByTimeAsync(40_000)
      const error = await refused
      expect(error).toBeInstanceOf(RateLimitError)
      expect((error as RateLimitError).message).toContain('past 60000 ms of pause per try')
      expect((error as RateLimitError).retryAfterMs).toBe(40_000)
      expect(gets).toBe(2)
      expect(server.arrivals).toHaveLength(0)
    } finally {
      vi.useRealTimers()
    }
  })

  it('an abort while waiting out a store pause says so', async () => {
    const store = memoryStore('sync', Date.now() + 30_000)
    const client = makeClient({ rateLimitStore: store })
    const error = await rejection(client.agents.list({}, { signal: AbortSignal.timeout(200) }))
    expect(error).toBeInstanceOf(APIUserAbortError)
    expect((error as APIUserAbortError).message).toContain("while waiting out the client's 429 pause")
    expect((error as APIUserAbortError).message).toContain('rateLimitStore')
    expect(server.arrivals).toHaveLength(0)
  })
})

describe('a store that fails never fails a call', () => {
  const failing = {
    throws: {
      get(): number {
        throw new Error(`redis down (${KEY_SECRET})`)
      },
      set(): void {
        throw new Error('redis down')
      },
    },
    rejects: {
      get: (): Promise<number> => Promise.reject(new Error(`redis down (${KEY_SECRET})`)),
      set: (): Promise<void> => Promise.reject(new Error('redis down')),
    },
  } satisfies Record<string, RateLimitStore>

  it.each(Object.keys(failing) as (keyof typeof failing)[])(
    'get and set that %s: calls succeed (the 429 retried on the own pause), one warn each, redacted',
    async (kind) => {
      const logger = recordingLogger()
      const client = makeClient({ rateLimitStore: failing[kind], logger, logLevel: 'warn' })
      // Calls accepted first: after the 429 the calls below go at the rate they taught, not 2 s apart (test/helpers/pacing.ts).
      await acceptSome(client)
      server.clear()
      rateLimitFirst(RATE_LIMITED_SHORT)
      expect((await client.agents.list()).data).toEqual(PAGE.data)
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 110))
        expect((await client.agents.list()).data).toEqual(PAGE.data)
      }
      // The own pause still worked: the retry came after the 429's wait.
      expect(server.arrivals[1]!.at - server.arrivals[0]!.at).toBeGreaterThanOrEqual(0.9 * SHORT_PAUSE_MS)
      const warnings = logger.messages('warn')
      expect(warnings.filter((m) => m.includes('rateLimitStore.get() failed'))).toHaveLength(1)
      expect(warnings.filter((m) => m.includes('rateLimitStore.set() failed'))).toHaveLength(1)
      expect(warnings).toHaveLength(2)
      expect(warnings.join('\n')).not.toContain(KEY_SECRET)
      expect(warnings.join('\n')).toContain('[REDACTED]')
    },
  )

  it('errors that cannot even be described, and a logger that throws: calls still succeed, and nothing is left unhandled', async () => {
    const undescribable = (): Error => {
      const error = new Error('x')
      Object.defineProperty(error, 'message', {
        get() {
          throw new Error('this error cannot be read')
        },
      })
      return error
    }
    const store: RateLimitStore = {
      get: () => {
        throw undescribable()
      },
      set: () => Promise.reject(undescribable()),
    }
    const throwingLogger = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => {
        throw new Error('the logger is broken')
      },
      error: () => undefined,
    }
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason)
    }
    process.on('unhandledRejection', onUnhandled)
    try {
      for (const logger of [recordingLogger(), throwingLogger]) {
        server.clear()
        const client = makeClient({ rateLimitStore: store, logger, logLevel: 'warn' })
        await acceptSome(client)
        rateLimitFirst(RATE_LIMITED_SHORT)
        expect((await client.agents.list()).data).toEqual(PAGE.data)
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })

  it(`a get() that never answers: calls go on after ${RATE_LIMIT_STORE_GET_TIMEOUT_MS} ms, and later ones do not wait; one warn`, async () => {
    const logger = recordingLogger()
    let gets = 0
    const hanging: RateLimitStore = {
      get: () => {
        gets++
        return new Promise<number>(() => undefined)
      },
      set: () => undefined,
    }
    const client = makeClient({ rateLimitStore: hanging, logger, logLevel: 'warn' })
    const started = performance.now()
    expect((await client.agents.list()).data).toEqual(PAGE.data)
    const waited = server.arrivals[0]!.at - started
    expect(waited).toBeGreaterThanOrEqual(RATE_LIMIT_STORE_GET_TIMEOUT_MS - 10)
    expect(waited).toBeLessThan(RATE_LIMIT_STORE_GET_TIMEOUT_MS + 1_000) // the bound holds (a loose ceiling: a loaded machine)
    for (let i = 0; i < 5; i++) expect((await client.agents.list()).data).toEqual(PAGE.data)
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect((await client.agents.list()).data).toEqual(PAGE.data)
    expect(gets).toBe(1) // never a second read while one is pending
    const warnings = logger.messages('warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(`has not answered in ${RATE_LIMIT_STORE_GET_TIMEOUT_MS} ms`)
  })

  it.each([
    ['NaN', Number.NaN],
    ['a string', '1732590000000'],
    ['null', null],
    ['10 minutes ahead', Date.now() + 600_000],
  ])('a get() that answers %s: ignored, calls go on, one warn', async (_name, value) => {
    const logger = recordingLogger()
    const client = makeClient({ rateLimitStore: { get: () => value as number, set: () => undefined }, logger, logLevel: 'warn' })
    for (let i = 0; i < 3; i++) {
      expect((await client.agents.list()).data).toEqual(PAGE.data)
      await new Promise((resolve) => setTimeout(resolve, 110))
    }
    expect(client.rateLimitedUntil).toBeUndefined()
    const warnings = logger.messages('warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('rateLimitStore.get() answered')
  })
})

describe('validation', () => {
  it.each<[string, unknown]>([
    ['an empty object', {}],
    ['get not a function', { get: 1, set: () => undefined }],
    ['no set', { get: () => 0 }],
    ['a string', 'redis://localhost'],
    ['null', null],
    ['with a negative maxAgeMs', { get: () => 0, set: () => undefined, maxAgeMs: -1 }],
    ['with a maxAgeMs that is not a whole number', { get: () => 0, set: () => undefined, maxAgeMs: 0.5 }],
    ['with a maxAgeMs over 60,000', { get: () => 0, set: () => undefined, maxAgeMs: 60_001 }],
  ])('a rateLimitStore that is %s: RequestValidationError at construction', (_name, store) => {
    const error = (() => {
      try {
        makeClient({ rateLimitStore: store as RateLimitStore })
      } catch (caught) {
        return caught
      }
      return undefined
    })()
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as RequestValidationError).message).toContain('rateLimitStore')
  })

  it('withOptions cannot set it: the pause and its store belong to the client made with new', () => {
    const client = makeClient()
    const store = memoryStore('sync')
    expect(() => client.withOptions({ rateLimitStore: store } as never)).toThrow(RequestValidationError)
  })
})
