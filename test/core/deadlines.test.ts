/**
 * Calls that keep their deadline and say why they failed (issue 18), at a loopback server:
 * `totalTimeout` (client, withOptions, per call) over attempts, backoff, Retry-After waits and the
 * 429 pause, never starting a wait that cannot end inside it; the 429 pause made visible
 * (`rateLimitedUntil`) and controllable (`rateLimitPause: 'fail'`); aborts that keep their reason and
 * say when they happened; `RateLimitError.retryAfterMs`; `retryable` on every error; a floor between
 * attempts; and input that would only ever fail (whitespace around the key, a `/rest` base URL)
 * refused before anything is sent.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  BadRequestError,
  ChatServiceClient,
  ChatServiceError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
  RequestValidationError,
  ResponseValidationError,
  StaleCursorError,
  type ClientOptions,
} from 'chat-service-sdk'
import { MIN_RETRY_DELAY_MS } from '../../src/core/retry.ts'
import { KEY_ID, KEY_SECRET, agent, tokenResponse } from '../helpers/fixtures.ts'
import { recordingLogger, rejection, type LoopbackServer, type Reply, useLoopback } from '../helpers/loopback.ts'
import { sdkBundleEnv } from '../helpers/sdk-bundle.ts'

const PAGE = { data: [agent(1)], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } }

let server: LoopbackServer
const clients: ChatServiceClient[] = []

useLoopback((started) => {
  server = started
})
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()))
})

function makeClient(extra: Partial<ClientOptions> = {}): ChatServiceClient {
  const client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off', ...extra })
  clients.push(client)
  return client
}

/** Answers the first `n` requests with `first`, the rest with `rest`. */
function respondInTurn(first: (i: number) => Reply, n: number): void {
  let seen = 0
  server.respond((request) => (seen++ < n ? first(seen) : request.method === 'POST' ? { body: tokenResponse() } : { body: PAGE }))
}

describe('totalTimeout', () => {
  it('a Retry-After longer than what is left is not waited: APITimeoutError at once, cause the 503, one request sent', async () => {
    server.respond(() => ({ status: 503, headers: { 'retry-after': '30', 'x-request-id': 'r-503' }, body: { error: 'busy' } }))
    const client = makeClient({ totalTimeout: 2_000, maxRetries: 5 })
    // Were the 30 s wait started, this would outlive the test's own timeout.
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(APITimeoutError)
    const timeout = error as APITimeoutError
    expect(timeout.message).toContain('totalTimeout (2000 ms)')
    expect(timeout.message).toContain('30000 ms before retry 1')
    expect(timeout.cause).toBeInstanceOf(InternalServerError)
    expect((timeout.cause as InternalServerError).status).toBe(503)
    expect((timeout.cause as InternalServerError).requestId).toBe('r-503')
    expect(timeout.retryable).toBe(true)
    expect(server.arrivals).toHaveLength(1)
  })

  it('cuts a slow attempt to what is left, whatever the per-attempt timeout; the cause is the attempt before', async () => {
    respondInTurn((i) => (i === 1 ? { status: 503, headers: { 'retry-after-ms': '0' }, body: 'busy' } : { body: PAGE, delayMs: 5_000 }), 2)
    const client = makeClient({ timeout: 60_000, maxRetries: 3 })
    const error = await rejection(client.agents.list({}, { totalTimeout: 800 }))
    expect(error).toBeInstanceOf(APITimeoutError)
    expect((error as APITimeoutError).message).toContain('during attempt 2')
    expect((error as APITimeoutError).cause).toBeInstanceOf(InternalServerError)
    expect(server.arrivals).toHaveLength(2)
  })

  it('a first attempt cut by the deadline has no cause (no attempt ended before it)', async () => {
    server.respond(() => ({ body: PAGE, delayMs: 5_000 }))
    const error = await rejection(makeClient().agents.list({}, { totalTimeout: 300 }))
    expect(error).toBeInstanceOf(APITimeoutError)
    expect((error as APITimeoutError).cause).toBeUndefined()
  })

  it('per call over withOptions over the client; a list bounds each page request', async () => {
    server.respond(() => ({ body: PAGE, delayMs: 300 }))
    const client = makeClient({ totalTimeout: 100 })
    expect(await rejection(client.agents.list())).toBeInstanceOf(APITimeoutError)
    const patient = client.withOptions({ totalTimeout: 10_000 })
    expect((await patient.agents.list()).data).toEqual(PAGE.data)
    expect(await rejection(patient.agents.list({}, { totalTimeout: 100 }))).toBeInstanceOf(APITimeoutError)
    expect((await client.agents.list({}, { totalTimeout: 10_000 })).data).toEqual(PAGE.data)
  })

  it('is checked like the other options', () => {
    const client = makeClient()
    expect(() => client.withOptions({ totalTimeout: 0 })).toThrow(RequestValidationError)
    expect(() => makeClient({ totalTimeout: -1 })).toThrow(RequestValidationError)
  })
})

describe('the attempt deadline, with nothing else holding the process open', () => {
  // Only a process shows it: a test runner keeps its own alive. Each case is a child process whose
  // dispatcher holds requests without a socket (`Silent`: a mock that never answers, as msw's
  // delay('infinite') over its in-memory socket), so that nothing but the SDK can keep it alive
  // until an attempt's deadline. The deadline timer is unref'd; src/internal/exit-hold.ts keeps the
  // process alive from 'beforeExit' while an attempt is unsettled. With a plain unref, and no hold,
  // the child exited after ~50 ms with the call unsettled (exit 13, "unsettled top-level await";
  // exit 0 and no output in CommonJS). The spawn's own 15 s limit is what fails a child that
  // lingers.
  const UNDICI = new URL('../../node_modules/undici/index.js', import.meta.url)
  const FROM_SOURCE = fileURLToPath(new URL('../helpers/sdk-from-source.ts', import.meta.url))
  const OPTIONS = `{ baseUrl: 'https://chat.test', keyId: 'key_1', keySecret: 'sk_test_0123456789abcdef', timeout: 200, maxRetries: 0, logLevel: 'off' }`
  /** ES module prelude: `Silent`, `Answering` (each request answered with PAGE on the next turn), `client(dispatcher, options)`, `outcome(promise)`. */
  const PRELUDE = `
import { Dispatcher } from '${UNDICI.href}'
import { ChatServiceClient, type ClientOptions } from 'chat-service-sdk'
class Silent extends Dispatcher {
  dispatched = 0
  dispatch(): boolean { this.dispatched++; return true } // holds the request, answers nothing, opens nothing
}
/** Answers the n-th request (from 1) with \`reply(n)\` on the next turn of the loop, opening nothing; from the \`silentFrom\`-th on, answers nothing. */
class Answering extends Dispatcher {
  seen = 0
  readonly reply: (n: number) => { status: number; headers: Record<string, string>; body: unknown }
  readonly silentFrom: number
  constructor(reply: Answering['reply'], silentFrom = Infinity) { super(); this.reply = reply; this.silentFrom = silentFrom }
  dispatch(_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const n = ++this.seen
    if (n >= this.silentFrom) return true
    setImmediate(() => {
      const controller = { abort() {}, pause() {}, resume() {}, aborted: false, paused: false, reason: null } as unknown as Dispatcher.DispatchController
      const { status, headers, body } = this.reply(n)
      handler.onRequestStart?.(controller, {})
      handler.onResponseStart?.(controller, status, { 'content-type': 'application/json', ...headers }, 'OK')
      handler.onResponseData?.(controller, Buffer.from(JSON.stringify(body)))
      handler.onResponseEnd?.(controller, {})
    })
    return true
  }
}
const client = (dispatcher: Dispatcher, options: Partial<ClientOptions> = {}) => new ChatServiceClient({ ...${OPTIONS}, dispatcher, ...options })
const outcome = (promise: Promise<unknown>) => promise.then(() => 'resolved', (error: Error) => error.name)
const PAGE = ${JSON.stringify(PAGE)}
`
  let dir: string
  let env: NodeJS.ProcessEnv
  beforeAll(async () => {
    env = { ...process.env, ...(await sdkBundleEnv()) }
    dir = mkdtempSync(join(tmpdir(), 'chat-service-sdk-deadline-'))
  })
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true })
  })

  /** Runs `files` (the first one the main script) in a child process: its exit code and output. */
  function run(files: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
    for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source)
    const main = join(dir, Object.keys(files)[0]!)
    const child = spawnSync(process.execPath, ['--no-warnings', '--import', FROM_SOURCE, main], { encoding: 'utf8', timeout: 15_000, env })
    return { status: child.status, stdout: child.stdout.trim(), stderr: child.stderr }
  }

  it('a dispatcher that holds the request without a socket (a mock that never answers): APITimeoutError, not a process that exits under the call (top-level await)', () => {
    const child = run({ 'await.mts': `${PRELUDE}\nconsole.log(await outcome(client(new Silent()).agents.list()))\n` })
    expect({ status: child.status, stdout: child.stdout }, child.stderr).toEqual({ status: 0, stdout: 'APITimeoutError' })
  })

  it('the same in CommonJS, where the process would exit 0 with the call unsettled', () => {
    const child = run({
      'common.cjs': `
const { Dispatcher } = require(${JSON.stringify(fileURLToPath(UNDICI))})
const { ChatServiceClient } = require('chat-service-sdk')
class Silent extends Dispatcher { dispatch() { return true } }
new ChatServiceClient({ ...${OPTIONS}, dispatcher: new Silent() }).agents.list().then(() => console.log('resolved'), (error) => console.log(error.name))
`,
    })
    expect({ status: child.status, stdout: child.stdout }, child.stderr).toEqual({ status: 0, stdout: 'APITimeoutError' })
  })

  it('in a worker thread, which would end under the call', () => {
    const child = run({
      'main.mts': `
import { Worker } from 'node:worker_threads'
const worker = new Worker(new URL('./worker.mts', import.meta.url))
let answer = 'the worker ended without an answer'
worker.on('message', (message: string) => { answer = message })
worker.on('exit', (code: number) => { console.log(answer, code) })
`,
      'worker.mts': `${PRELUDE}
import { parentPort } from 'node:worker_threads'
parentPort!.postMessage(await outcome(client(new Silent()).agents.list()))
`,
    })
    expect({ status: child.status, stdout: child.stdout }, child.stderr).toEqual({ status: 0, stdout: 'APITimeoutError 0' })
  })

  it('several unsettled calls of different deadlines: each one times out, the last one too', () => {
    const child = run({
      'several.mts': `${PRELUDE}
const silent = new Silent()
const calls = [300, 100, 200].map((timeout) => outcome(client(silent, { timeout }).agents.list()))
console.log((await Promise.all(calls)).join(' '), silent.dispatched)
`,
    })
    expect({ status: child.status, stdout: child.stdout }, child.stderr).toEqual({
      status: 0,
      stdout: 'APITimeoutError APITimeoutError APITimeoutError 3',
    })
  })

  it('a retry after a timed-out attempt, and after the wait a 429 asked for: the loop empties again before each, and each attempt still times out', () => {
    const child = run({
      'retries.mts': `${PRELUDE}
const silent = new Silent()
const retried = await outcome(client(silent, { timeout: 100, maxRetries: 1 }).agents.list())
const paced = new Answering(() => ({ status: 429, headers: { 'retry-after-ms': '150' }, body: { error: 'slow down' } }), 2)
const afterPause = await outcome(client(paced, { timeout: 100, maxRetries: 1 }).agents.list())
console.log(retried, silent.dispatched, afterPause, paced.seen)
`,
    })
    // Three requests for the paced client: a paced 429 is sent again after its wait without counting
    // against maxRetries, and the timeout of the attempt after it is retried once.
    expect({ status: child.status, stdout: child.stdout }, child.stderr).toEqual({
      status: 0,
      stdout: 'APITimeoutError 2 APITimeoutError 3',
    })
  })

  it("a call armed under a test's fake timers that are then reset: the process exits, not held for ever by a deadline that will never fire", () => {
    // Found by a cold review: counted, such an attempt kept the hold (a ref'd timer) for ever once
    // the loop emptied; before the hold, the fake deadline held nothing and the process exited.
    const child = run({
      'fake.mts': `${PRELUDE}
import { mock } from 'node:test'
mock.timers.enable({ apis: ['setTimeout', 'setInterval'] })
const pending = client(new Silent(), { timeout: 60_000 }).agents.list()
pending.catch(() => {})
await new Promise((resolve) => setImmediate(resolve))
mock.timers.reset()
console.log('left pending', process.listenerCount('beforeExit'))
`,
    })
    // Held, the child is killed by the spawn's 15 s limit (status null).
    expect({ status: child.status, stdout: child.stdout }, child.stderr).toEqual({ status: 0, stdout: 'left pending 0' })
  })

  it('a call answered in time leaves nothing behind: the process exits at once, not at the (10-minute) deadline; no listener at import', () => {
    const child = run({
      'answered.mts': `${PRELUDE}
const listeners = () => process.listenerCount('beforeExit')
const before = listeners()
const answered = await outcome(client(new Answering(() => ({ status: 200, headers: {}, body: PAGE })), { timeout: 600_000 }).agents.list())
console.log(before, answered, listeners())
`,
    })
    // Lingering until the deadline, the child would be killed by the spawn's 15 s limit (status null).
    expect({ status: child.status, stdout: child.stdout }, child.stderr).toEqual({ status: 0, stdout: '0 resolved 1' })
  })
})

describe('the 429 pause', () => {
  function rateLimitOnce(retryAfter = '30'): void {
    respondInTurn(() => ({ status: 429, headers: { 'retry-after': retryAfter, 'x-request-id': 'r-429' }, body: { error: 'slow down' } }), 1)
  }

  it('rateLimitedUntil says until when; rateLimitPause: fail rejects at once with the 429 that started it, nothing sent', async () => {
    rateLimitOnce()
    const client = makeClient({ maxRetries: 0 })
    expect(client.rateLimitedUntil).toBeUndefined()
    const before = Date.now()
    expect(await rejection(client.agents.list())).toBeInstanceOf(RateLimitError)
    const until = client.rateLimitedUntil
    expect(until).toBeInstanceOf(Date)
    expect(until!.getTime()).toBeGreaterThanOrEqual(before + 29_000)
    // Shared with derived clients.
    expect(client.withOptions({ timeout: 5_000 }).rateLimitedUntil).toEqual(until)

    const error = await rejection(client.auth.issueToken({ userId: 'ext-1' }, { rateLimitPause: 'fail' }))
    expect(error).toBeInstanceOf(RateLimitError)
    const refused = error as RateLimitError
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ error: 'slow down' })
    expect(refused.requestId).toBe('r-429')
    expect(refused.headers['retry-after']).toBe('30')
    expect(refused.method).toBe('POST')
    expect(refused.path).toBe('/rest/v1/auth/token')
    expect(refused.retryAfterMs).toBeGreaterThan(20_000)
    expect(refused.retryAfterMs).toBeLessThanOrEqual(30_000)
    expect(refused.message).toContain("rateLimitPause: 'fail'")
    expect(refused.retryable).toBe(true)
    expect(server.arrivals).toHaveLength(1)
    // Also as a default of a derived client.
    const failing = client.withOptions({ rateLimitPause: 'fail' })
    expect(await rejection(failing.agents.list())).toBeInstanceOf(RateLimitError)
    expect(server.arrivals).toHaveLength(1)
  })

  it('an abort while waiting on the pause says so, and keeps the signal’s reason as its cause', async () => {
    rateLimitOnce()
    const client = makeClient({ maxRetries: 0 })
    await rejection(client.agents.list())
    const error = await rejection(client.agents.list({}, { signal: AbortSignal.timeout(200) }))
    expect(error).toBeInstanceOf(APIUserAbortError)
    expect((error as APIUserAbortError).message).toContain("while waiting out the client's 429 pause")
    expect(((error as APIUserAbortError).cause as Error).name).toBe('TimeoutError')
    expect((error as APIUserAbortError).retryable).toBe(false)
    expect(server.arrivals).toHaveLength(1)
  })

  it('a pause longer than what is left of totalTimeout is not waited: APITimeoutError that says why, nothing sent', async () => {
    rateLimitOnce()
    const client = makeClient({ maxRetries: 0 })
    await rejection(client.agents.list())
    const error = await rejection(client.agents.list({}, { totalTimeout: 1_000 }))
    expect(error).toBeInstanceOf(APITimeoutError)
    expect((error as APITimeoutError).message).toContain('the client is paused after a 429')
    expect(server.arrivals).toHaveLength(1)
  })
})

describe('APIError.retryAfterMs, on every status the service sends a wait with', () => {
  it('a 503 with Retry-After: 7 carries 7,000 ms; a 400 with retry-after-ms, a 502 with an HTTP date, too; undefined when absent', async () => {
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString()
    for (const [status, headers, ErrorClass, expected] of [
      [503, { 'retry-after': '7' }, InternalServerError, [7_000, 7_000]],
      [502, { 'retry-after': inTenSeconds }, InternalServerError, [8_000, 10_000]],
      [400, { 'retry-after-ms': '1499.2' }, BadRequestError, [1_500, 1_500]],
      [404, { 'retry-after': '0' }, NotFoundError, [0, 0]],
      [503, {}, InternalServerError, undefined],
      [503, { 'retry-after': 'soon' }, InternalServerError, undefined],
    ] as const) {
      server.respond(() => ({ status, headers, body: { error: 'busy' } }))
      const error = (await rejection(makeClient({ maxRetries: 0 }).agents.list())) as APIError
      expect(error).toBeInstanceOf(ErrorClass)
      if (expected === undefined) expect(error.retryAfterMs).toBeUndefined()
      else {
        expect(error.retryAfterMs).toBeGreaterThanOrEqual(expected[0])
        expect(error.retryAfterMs).toBeLessThanOrEqual(expected[1])
      }
    }
  })

  it('the 503 a totalTimeout gave up on keeps the wait it asked for, for the caller to schedule its own retry', async () => {
    server.respond(() => ({ status: 503, headers: { 'retry-after': '30' }, body: { error: 'busy' } }))
    const error = await rejection(makeClient({ totalTimeout: 2_000, maxRetries: 5 }).agents.list())
    expect(error).toBeInstanceOf(APITimeoutError)
    const cause = (error as APITimeoutError).cause as APIError
    expect(cause).toBeInstanceOf(InternalServerError)
    expect(cause.retryAfterMs).toBe(30_000)
  })

  it('an APIError you make yourself reads its headers too, and an explicit retryAfterMs wins', () => {
    const init = { status: 503, headers: { 'retry-after': '3' }, body: undefined, method: 'GET', path: '/x' }
    expect(new InternalServerError(init).retryAfterMs).toBe(3_000)
    expect(new APIError({ ...init, retryAfterMs: 1_000 }).retryAfterMs).toBe(1_000)
    expect(JSON.parse(JSON.stringify(new APIError(init)))).toMatchObject({ retryAfterMs: 3_000 })
  })
})

describe('RateLimitError.retryAfterMs', () => {
  it('reads Retry-After in seconds, as an HTTP date, and retry-after-ms; undefined when absent', async () => {
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString()
    for (const [headers, expected] of [
      [{ 'retry-after': '7' }, [7_000, 7_000]],
      [{ 'retry-after': inTenSeconds }, [8_000, 10_000]],
      [{ 'retry-after-ms': '1500' }, [1_500, 1_500]],
      [{}, undefined],
    ] as const) {
      server.respond(() => ({ status: 429, headers, body: 'slow down' }))
      // A client each: the pause one case starts must not hold up the next.
      const error = (await rejection(makeClient({ maxRetries: 0 }).agents.list())) as RateLimitError
      expect(error).toBeInstanceOf(RateLimitError)
      if (expected === undefined) expect(error.retryAfterMs).toBeUndefined()
      else {
        expect(error.retryAfterMs).toBeGreaterThanOrEqual(expected[0])
        expect(error.retryAfterMs).toBeLessThanOrEqual(expected[1])
      }
    }
  })

  it('a RateLimitError you make yourself reads its headers too', () => {
    const error = new RateLimitError({ status: 429, headers: { 'retry-after': '3' }, body: undefined, method: 'GET', path: '/x' })
    expect(error.retryAfterMs).toBe(3_000)
  })
})

describe('retryable, on every error', () => {
  it('follows the status for APIError subclasses: 408, 429, 500, 502, 503, 504 yes; other 4xx and 501 no', async () => {
    const client = makeClient({ maxRetries: 0 })
    const cases: [number, boolean, typeof APIError][] = [
      [400, false, BadRequestError],
      [404, false, NotFoundError],
      [408, true, APIError],
      [500, true, InternalServerError],
      [501, false, InternalServerError],
      [503, true, InternalServerError],
    ]
    for (const [status, retryable, ErrorClass] of cases) {
      server.respond(() => ({ status, body: 'x' }))
      const error = await rejection(client.agents.list())
      expect(error, String(status)).toBeInstanceOf(ErrorClass)
      expect((error as APIError).retryable, String(status)).toBe(retryable)
    }
  })

  it('connection failures yes, what would fail the same way no', async () => {
    const refused = makeClient({ baseUrl: 'http://127.0.0.1:9', maxRetries: 0 })
    const connection = await rejection(refused.agents.list())
    expect(connection).toBeInstanceOf(APIConnectionError)
    expect((connection as APIConnectionError).retryable).toBe(true)

    server.respond(() => ({ body: PAGE, delayMs: 500 }))
    const client = makeClient({ maxRetries: 0 })
    expect(((await rejection(client.agents.list({}, { timeout: 50 }))) as APITimeoutError).retryable).toBe(true)
    const invalid = await rejection(client.agents.list({ limit: 500 }))
    expect(invalid).toBeInstanceOf(RequestValidationError)
    expect((invalid as RequestValidationError).retryable).toBe(false)
    server.respond(() => ({ body: { unexpected: true } }))
    const bad = await rejection(client.agents.list())
    expect(bad).toBeInstanceOf(ResponseValidationError)
    expect((bad as ResponseValidationError).retryable).toBe(false)
    const controller = new AbortController()
    controller.abort(new Error('mine'))
    const aborted = await rejection(client.agents.list({}, { signal: controller.signal }))
    expect((aborted as APIUserAbortError).retryable).toBe(false)
    await client.close()
    const closed = await rejection(client.agents.list())
    expect(closed).toBeInstanceOf(ChatServiceError)
    expect((closed as ChatServiceError).retryable).toBe(false)
    expect(new StaleCursorError('stale').retryable).toBe(false)
    expect(new ChatServiceError('plain').retryable).toBe(false)
    expect(JSON.parse(JSON.stringify(connection)) as unknown).toMatchObject({ retryable: true })
  })
})

describe('aborts keep their reason', () => {
  it('as the cause: a signal aborted before the call, during the request, and during a retry wait', async () => {
    const client = makeClient({ maxRetries: 3 })
    const reason = new Error('the user left')
    const before = new AbortController()
    before.abort(reason)
    const early = await rejection(client.agents.list({}, { signal: before.signal }))
    expect(early).toBeInstanceOf(APIUserAbortError)
    expect((early as APIUserAbortError).cause).toBe(reason)

    server.respond(() => ({ body: PAGE, delayMs: 2_000 }))
    const during = new AbortController()
    const pending = client.agents.list({}, { signal: during.signal })
    setTimeout(() => {
      during.abort(reason)
    }, 100)
    const error = await rejection(pending)
    expect((error as APIUserAbortError).cause).toBe(reason)

    server.respond(() => ({ status: 503, headers: { 'retry-after': '20' }, body: 'busy' }))
    // 2 s: the 503 is back and its 20 s wait begun when the signal fires (300 ms left a loaded machine no room).
    const waiting = await rejection(client.agents.list({}, { signal: AbortSignal.timeout(2_000) }))
    expect(waiting).toBeInstanceOf(APIUserAbortError)
    expect((waiting as APIUserAbortError).message).toContain('while waiting 20000 ms to retry')
    expect(((waiting as APIUserAbortError).cause as Error).name).toBe('TimeoutError')
  })
})

describe('a floor between attempts', () => {
  it(`Retry-After: 0 still waits ${MIN_RETRY_DELAY_MS} ms between attempts`, async () => {
    server.respond(() => ({ status: 503, headers: { 'retry-after': '0' }, body: 'busy' }))
    const logger = recordingLogger()
    const client = makeClient({ maxRetries: 3, logger, logLevel: 'info' })
    expect(await rejection(client.agents.list())).toBeInstanceOf(InternalServerError)
    expect(server.arrivals).toHaveLength(4)
    expect(logger.messages('info').filter((m) => m.includes(`retrying in ${MIN_RETRY_DELAY_MS} ms`))).toHaveLength(3)
    for (let i = 1; i < server.arrivals.length; i++) {
      expect(server.arrivals[i]!.at - server.arrivals[i - 1]!.at).toBeGreaterThanOrEqual(MIN_RETRY_DELAY_MS - 5)
    }
  })
})

describe('input that could only fail is refused before sending', () => {
  it('a key id or secret with whitespace around it, from the options or the environment, without showing the secret', () => {
    const secret = `${KEY_SECRET}\n`
    let error: unknown
    try {
      makeClient({ keySecret: secret })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as RequestValidationError).message).toContain('keySecret starts or ends with whitespace')
    expect((error as RequestValidationError).message).not.toContain(KEY_SECRET)
    expect(JSON.stringify(error)).not.toContain(KEY_SECRET)
    expect(() => makeClient({ keyId: ` ${KEY_ID}` })).toThrow(/keyId starts or ends with whitespace/)

    const saved = process.env['CHAT_SERVICE_KEY_SECRET']
    process.env['CHAT_SERVICE_KEY_SECRET'] = `${KEY_SECRET}\r\n`
    try {
      expect(() => new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID })).toThrow(/from CHAT_SERVICE_KEY_SECRET/)
    } finally {
      if (saved === undefined) delete process.env['CHAT_SERVICE_KEY_SECRET']
      else process.env['CHAT_SERVICE_KEY_SECRET'] = saved
    }
    expect(server.arrivals).toHaveLength(0)
  })

  it('a baseUrl ending in /rest, with a hint', () => {
    for (const baseUrl of [`${server.origin}/rest`, `${server.origin}/rest/`, `${server.origin}/proxy/REST`]) {
      expect(() => makeClient({ baseUrl }), baseUrl).toThrow(/ends in \/rest: .*give the origin, or a URL that ends in \/rest\/v1/)
    }
    expect(makeClient({ baseUrl: `${server.origin}/rest/v1` }).baseUrl).toBe(`${server.origin}/rest/v1`)
  })
})
