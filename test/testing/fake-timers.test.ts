// Tests that do not sleep (issue 21): the SDK's waits (a Retry-After, the client-wide 429 pause,
// the backoff after a 503) run on the global setTimeout, so a user's vi.useFakeTimers() reaches
// them and a 20 s Retry-After takes as long as the test advances its clock, not 20 s.
// As a user writes it: the fake in listen mode, faults queued with failNext, vitest's fake timers
// as TESTING.md says: every timer faked except setImmediate. undici waits one setImmediate before it
// writes a request on an idle kept-alive connection; with that faked too, the request waits until
// the server closes the idle connection (5 s on Node's http server) and goes on a new one.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ChatServiceClient, RateLimitError } from 'chat-service-sdk'
import { createFakeChatService, type FakeChatService, type FakeServerHandle } from 'chat-service-sdk/testing'
import { fixtureSeed } from './helpers.ts'

/** The real timers, kept before any test fakes them: real I/O goes on while the fake clock stands still. */
const realSetImmediate = globalThis.setImmediate
const realSetTimeout = globalThis.setTimeout
const tick = (): Promise<void> => new Promise((resolve) => realSetImmediate(resolve))
const realDelay = (ms: number): Promise<void> => new Promise((resolve) => realSetTimeout(resolve, ms))

let server: FakeServerHandle | undefined
let client: ChatServiceClient | undefined
afterEach(async () => {
  vi.useRealTimers()
  await client?.close()
  await server?.close()
  client = undefined
  server = undefined
})

async function start(): Promise<{ fake: FakeChatService; client: ChatServiceClient; retries: string[] }> {
  const fake = createFakeChatService({ seed: fixtureSeed() })
  server = await fake.listen()
  const retries: string[] = []
  const quiet = (): void => undefined
  const logger = { debug: quiet, warn: quiet, error: quiet, info: (message: string) => retries.push(message) }
  client = new ChatServiceClient({ ...server.clientOptions(), logger, logLevel: 'info' })
  return { fake, client, retries }
}

/** Whether `promise` has settled, without waiting for it. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  const pending = Symbol('pending')
  // A real macrotask: the fake server answers on real sockets, so give it a moment to.
  await tick()
  return (
    (await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      Promise.resolve(pending),
    ])) !== pending
  )
}

/** The real clock, kept before any test fakes `performance`. */
const realNow = performance.now.bind(performance)

/** As TESTING.md recommends: every timer faked but setImmediate (undici's own wait before it reuses a connection). */
const fakeTimers = (options: { now?: number } = {}): void => {
  vi.useFakeTimers({ ...options, toNotFake: ['setImmediate', 'clearImmediate'] })
}

/**
 * Lets real I/O (the loopback server, the client's socket) go on while the fake clock stands still,
 * until `done()`. At most 3 s of real time: a loopback request takes milliseconds, and a request
 * stalled on a faked setImmediate would wait for the server's 5 s keep-alive timeout.
 */
async function realIo(done: () => boolean): Promise<void> {
  const started = realNow()
  while (!done()) {
    if (realNow() - started > 3_000) throw new Error(`still waiting after 3 s of real time: ${done.toString()}`)
    await realDelay(2)
  }
}

/** 100 ms of real time for I/O, to show that nothing happens while the fake clock stands still. */
const realIdle = (): Promise<void> => realDelay(100)

describe("vitest's fake timers reach the SDK's waits", () => {
  it('a 429 with Retry-After: 20 is waited out by advancing the fake clock 20 s, not by sleeping', async () => {
    const { fake, client } = await start()
    fake.failNext(1, { status: 429, headers: { 'retry-after': '20' } })
    fakeTimers()

    const call = client.agents.list()
    await realIo(() => client.rateLimitedUntil !== undefined) // the 429 has come back: the retry waits
    expect(fake.requests.map((r) => r.status)).toEqual([429])

    await vi.advanceTimersByTimeAsync(19_000)
    await realIdle()
    expect(fake.requests).toHaveLength(1) // still waiting: 19 s of the 20 s have passed
    expect(await settled(call)).toBe(false)

    await vi.advanceTimersByTimeAsync(1_000)
    await realIo(() => fake.requests.length === 2)
    const page = await call
    expect(page.data.length).toBeGreaterThan(0)
    expect(fake.requests.map((r) => r.status)).toEqual([429, 200])
  })

  it('the client-wide 429 pause holds later calls until the fake clock passes it; rateLimitedUntil follows the fake Date', async () => {
    const { fake, client } = await start()
    fakeTimers({ now: Date.UTC(2030, 0, 1) })
    fake.failNext(1, { status: 429, headers: { 'retry-after': '30' } })

    // The expectation is attached at once: the call may reject before the 429 is seen to arrive.
    const refused = expect(client.agents.list({}, { maxRetries: 0 })).rejects.toBeInstanceOf(RateLimitError)
    await realIo(() => fake.requests.length === 1)
    await refused
    expect(client.rateLimitedUntil).toEqual(new Date(Date.UTC(2030, 0, 1) + 30_000))

    const later = client.agents.list()
    await vi.advanceTimersByTimeAsync(29_000)
    await realIdle()
    expect(fake.requests).toHaveLength(1) // nothing sent during the pause
    await vi.advanceTimersByTimeAsync(1_000)
    await realIo(() => fake.requests.length === 2)
    await expect(later).resolves.toBeDefined()
    expect(client.rateLimitedUntil).toBeUndefined()
  })

  it('the backoff between retries of a 503 is on the fake clock too', async () => {
    const { fake, client, retries } = await start()
    fake.failNext(2, { status: 503 })
    fakeTimers()

    const call = client.agents.list()
    // Each retry is logged at info as its wait starts, with the wait's length (full-jitter backoff).
    const delayOf = (line: string | undefined): number => Number(/retrying in (\d+) ms/.exec(line ?? '')?.[1])
    await realIo(() => retries.length === 1)
    const first = delayOf(retries[0])
    await realDelay(first + 200) // longer than the backoff in real time: the fake clock stood still, so did the wait
    expect(retries).toHaveLength(1)
    expect(await settled(call)).toBe(false)
    await vi.advanceTimersByTimeAsync(first)
    await realIo(() => retries.length === 2)
    await vi.advanceTimersByTimeAsync(delayOf(retries[1]))
    await realIo(() => fake.requests.length === 3)
    await expect(call).resolves.toBeDefined()
    expect(fake.requests.map((r) => r.status)).toEqual([503, 503, 200])
  })
})
