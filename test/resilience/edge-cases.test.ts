// Edge cases found in review, each pinned by a test: non-network undici errors are not retried,
// headers undici refuses are refused before sending, an un-awaited list cannot crash the process,
// close() ends retry waits, ids must be well-formed Unicode, Retry-After parsing, error bodies over
// the cap, base URL forms, clean error causes, nested token redaction, frozen retry statuses, and
// the bound agent of a token.
import { inspect } from 'node:util'
import { MockAgent, type Dispatcher } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  APIConnectionError,
  APITimeoutError,
  ChatServiceClient,
  ChatServiceError,
  InternalServerError,
  RequestValidationError,
  ResponseValidationError,
} from 'chat-service-sdk'
import { RETRYABLE_STATUSES } from '../../src/core/retry.ts'
import { createFakeChatService, generateDataset, type FakeServerHandle } from 'chat-service-sdk/testing'
import { BACKOFF_BASE_MS, BACKOFF_CAP_MS } from '../../src/core/retry.ts'
import { backoffDelay, serverRequestedDelay } from '../../src/internal/retry-policy.ts'
import { until } from '../helpers/loopback.ts'

const seed = generateDataset({ seed: 3, agents: 2, customerUsers: 5, conversations: 2, messages: 10 })
const key = seed.companies[0]!.keys[0]!
const fake = createFakeChatService({ seed })
let server: FakeServerHandle
beforeAll(async () => {
  server = await fake.listen()
})
afterAll(() => server.close())

function client(options: Partial<ConstructorParameters<typeof ChatServiceClient>[0]> = {}): ChatServiceClient {
  return new ChatServiceClient({ baseUrl: server.url, keyId: key.keyId, keySecret: key.keySecret, logLevel: 'off', ...options })
}

function attempts(): number {
  const n = fake.requests.length
  fake.clearRequests()
  return n
}

describe('non-network failures are final', () => {
  it.each([{ expect: '100-continue' }, { upgrade: 'h2c' }, { 'keep-alive': 'timeout=5' }, { 'x-note': '€uro' }, { 'x-note': 'a\u0000b' }])(
    'header %j is refused before sending',
    async (headers) => {
      fake.clearRequests()
      await expect(client().agents.list({}, { headers })).rejects.toBeInstanceOf(RequestValidationError)
      expect(() => client({ headers })).toThrow(RequestValidationError)
      expect(attempts()).toBe(0)
    },
  )

  it('an error undici raises for the request itself (a MockAgent mismatch) is thrown at once, not retried', async () => {
    const mock = new MockAgent()
    mock.disableNetConnect()
    let dispatched = 0
    const counting = new Proxy(mock, {
      get(target, prop, receiver) {
        if (prop !== 'dispatch') return Reflect.get(target, prop, receiver) as unknown
        return (...args: Parameters<MockAgent['dispatch']>) => {
          dispatched++
          return target.dispatch(...args)
        }
      },
    })
    const c = new ChatServiceClient({
      baseUrl: 'https://chat.example.com',
      keyId: 'k',
      keySecret: 's3cret-value',
      dispatcher: counting,
      logLevel: 'off',
    })
    const error = await c.agents.list().then(
      () => undefined,
      (e: unknown) => e,
    )
    await mock.close()
    expect(error).toBeInstanceOf(APIConnectionError)
    expect(dispatched).toBe(1)
  })
})

describe('promises and lifecycle', () => {
  // A failing list awaited late is an unhandled rejection since 0.3, like any promise (issue 18):
  // test/core/promises.test.ts shows it in a child process.

  it('close() during a retry wait rejects the call at once with ChatServiceError', async () => {
    fake.failNext(1, { status: 503, headers: { 'retry-after': '30' } })
    const lines: string[] = []
    const c = client({ logLevel: 'info', logger: { debug() {}, info: (line: string) => lines.push(line), warn() {}, error() {} } })
    // Handled before anything else is awaited: a call is a promise (issue 18).
    const pending = c.agents.list().then(
      () => undefined,
      (e: unknown) => e,
    )
    // Closed once the retry wait has begun (logged just before it; a 100 ms sleep could end first on a loaded machine).
    await until(() => lines.some((line) => line.includes('retrying in 30000 ms')))
    const started = performance.now()
    await c.close()
    const error = await pending
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(error).toBeInstanceOf(ChatServiceError)
    expect(error).not.toBeInstanceOf(APIConnectionError)
    expect((error as Error).message).toMatch(/closed/)
    expect(attempts()).toBe(1)
  })

  it('concurrent close() calls share one release of the pool', async () => {
    const c = client()
    const first = c.close()
    const second = c.close()
    expect(second).toBe(first)
    await Promise.all([first, second])
  })

  it('a body that stops without its end or an error (a custom dispatcher) ends at the deadline, not a hang', async () => {
    let aborted: Error | undefined
    const cutOff = {
      dispatch: (_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) => {
        const controller = {
          abort: (reason: Error) => (aborted = reason),
          pause() {},
          resume() {},
          aborted: false,
          paused: false,
          reason: null,
        }
        handler.onRequestStart?.(controller, {})
        handler.onResponseStart?.(controller, 200, { 'content-type': 'application/json' }, 'OK')
        handler.onResponseData?.(controller, Buffer.from('{"data":[')) // and then nothing, ever
        return true
      },
      close: () => Promise.resolve(),
      destroy: () => Promise.resolve(),
    } as unknown as Dispatcher
    const c = new ChatServiceClient({
      baseUrl: 'https://chat.example.com',
      keyId: 'k',
      keySecret: 's',
      dispatcher: cutOff,
      maxRetries: 0,
      timeout: 50,
      logLevel: 'off',
    })
    await expect(c.agents.list()).rejects.toBeInstanceOf(APITimeoutError)
    expect(aborted).toBeInstanceOf(Error) // the abandoned exchange was cancelled at the dispatcher
  })

  it('a timeout has no Symbol as its cause', async () => {
    fake.failNext(1, { delayMs: 500 })
    const error = await client({ timeout: 50, maxRetries: 0 })
      .agents.list()
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(error).toBeInstanceOf(APITimeoutError)
    const cause = (error as APITimeoutError).cause
    expect(cause === undefined || cause instanceof Error).toBe(true)
    attempts()
  })
})

describe('input', () => {
  it('an id holding a lone surrogate is a RequestValidationError, not a URIError', async () => {
    await expect(client().conversations.messages.list('\uD800')).rejects.toBeInstanceOf(RequestValidationError)
    await expect(client().customerUsers.update('a\uDC00', { name: 'n' })).rejects.toBeInstanceOf(RequestValidationError)
  })

  it.each(['https://h//rest/v1', 'https://h/rest//v1/'])('%s has exactly one /rest/v1', (baseUrl) => {
    expect(new ChatServiceClient({ baseUrl, keyId: 'k', keySecret: 's' }).baseUrl).toBe('https://h/rest/v1')
  })

  it.each(['https://h/%72est/v1', 'https://h/%E0%A4%A'])('%s is refused', (baseUrl) => {
    expect(() => new ChatServiceClient({ baseUrl, keyId: 'k', keySecret: 's' })).toThrow(RequestValidationError)
  })
})

describe('responses', () => {
  it.each<[Record<string, string>, number | undefined]>([
    [{ 'retry-after': '2' }, 2_000],
    [{ 'retry-after': '1.5' }, 1_500], // not delay-seconds as RFC 9110 writes it, but a floor all the same
    [{ 'retry-after': '-1' }, undefined],
    [{ 'retry-after': 'soon' }, undefined],
    [{ 'retry-after-ms': '250.5' }, 251],
    [{ 'retry-after': 'Sun, 06 Nov 1994 08:49:37 GMT' }, 0],
    // Sent twice: joined with ", " on the way in; the longest readable wait is the floor.
    [{ 'retry-after': '2, 2' }, 2_000],
    [{ 'retry-after': '1, 3, soon' }, 3_000],
    [{ 'retry-after-ms': '100, 250' }, 250],
    [{ 'retry-after': 'Sat, 01 Jan 2000 00:00:05 GMT, Sat, 01 Jan 2000 00:00:05 GMT' }, 5_000],
    [{ 'retry-after': 'Saturday, 01-Jan-00 00:00:07 GMT, 3' }, 7_000],
    // An HTTP date counts from the response's Date (the server's clock), not from this machine's.
    [{ 'retry-after': 'Sat, 01 Jan 2000 00:01:05 GMT', date: 'Sat, 01 Jan 2000 00:01:00 GMT' }, 5_000],
    [{ 'retry-after': 'Fri, 31 Dec 1999 23:59:35 GMT', date: 'Fri, 31 Dec 1999 23:59:30 GMT' }, 5_000],
    [{ 'retry-after': 'Sat, 01 Jan 2000 00:00:05 GMT', date: 'garbled' }, 5_000],
    [{ 'retry-after': 'Sat, 01 Jan 2000 00:00:05 GMT', date: '1' }, 5_000], // not an HTTP date: this machine's clock
    [{ 'retry-after': 'Sat, 01 Jan 2000 00:00:05 GMT', date: 'Sat, 01 Jan 2000 00:00:00' }, 5_000], // no GMT: not one either
    [{ 'retry-after': 'Sat Jan  1 00:00:09 2000' }, 9_000], // asctime, GMT though it does not say so
    [{ 'retry-after': 'Fri, 5' }, undefined],
  ])('Retry-After %j → %s ms', (headers, expected) => {
    expect(serverRequestedDelay(headers, Date.parse('2000-01-01T00:00:00Z'))).toBe(expected)
  })

  it('backoff is full jitter: uniform in [0, min(cap, base × 2^retry))', () => {
    const top = (retry: number): number => backoffDelay(retry, () => 0.999999)
    expect([0, 1, 2, 3, 4, 5, 10].map(top)).toEqual([499, 999, 1999, 3999, 7999, 7999, 7999])
    expect(backoffDelay(3, () => 0)).toBe(0)
    expect(backoffDelay(2, () => 0.5)).toBe(BACKOFF_BASE_MS * 2) // half of 2,000 ms
    expect(BACKOFF_CAP_MS).toBe(8_000)
  })

  it('an error response over the cap is still an APIError (retried, body cut off at 64 KiB)', async () => {
    // On an endpoint no earlier test of the file calls, its faults matched to it, and counted by a
    // header of its own: a request an earlier test's client gave up on may reach the fake late, on a
    // loaded machine, after that test cleared the log (seen once: 4 attempts).
    attempts()
    fake.failNext(3, { status: 503, body: 'x'.repeat(200_000), headers: { 'retry-after-ms': '1' }, match: { path: /\/conversations$/ } })
    const error = await client({ maxRetries: 2, headers: { 'x-case': 'over-cap' } })
      .conversations.list()
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(error).toBeInstanceOf(InternalServerError)
    expect(String((error as InternalServerError).body)).toMatch(/cut off after 65536 bytes\]$/)
    expect(fake.requests.filter((r) => r.headers['x-case'] === 'over-cap')).toHaveLength(3)
    attempts()
  })

  it('a token nested inside the token member is scrubbed from errors too', async () => {
    fake.failNext(1, { status: 200, body: { token: { value: 'tok_nested_secret_1234' }, user: 'broken' }, match: { method: 'POST' } })
    const error = await client()
      .auth.issueToken({ userId: 'u' })
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect(inspect(error, { depth: 10 })).not.toContain('tok_nested_secret_1234')
    expect(JSON.stringify(error)).not.toContain('tok_nested_secret_1234')
    attempts()
  })

  it('with an agentId, a response without the agent is a ResponseValidationError', async () => {
    fake.failNext(1, {
      status: 200,
      body: { token: 't.t.t', user: { id: 'cu', externalId: 'u', companyId: 'co', agentId: null }, agent: null },
      match: { method: 'POST' },
    })
    await expect(client().auth.issueToken({ userId: 'u', agentId: 'agent_1' })).rejects.toBeInstanceOf(ResponseValidationError)
    attempts()
  })

  it('a network error cause is a clean copy: the secret is not in it, even where the stack was read first', async () => {
    const secret = 'k3y-s3cret-value'
    const failing = {
      dispatch: (_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) => {
        const error = Object.assign(new Error(`socket failed while sending ${secret}`), { code: 'ECONNRESET' })
        if (error.stack?.includes(secret) !== true) throw new Error('expected the stack text to be fixed with the secret in it') // reading it fixes it
        handler.onResponseError?.(null as unknown as Dispatcher.DispatchController, error)
        return true
      },
      close: () => Promise.resolve(),
      destroy: () => Promise.resolve(),
    } as unknown as Dispatcher
    const c = new ChatServiceClient({
      baseUrl: 'https://chat.example.com',
      keyId: 'k',
      keySecret: secret,
      dispatcher: failing,
      maxRetries: 0,
      logLevel: 'off',
    })
    const error = await c.agents.list().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(APIConnectionError)
    expect((error as APIConnectionError).cause).toMatchObject({ code: 'ECONNRESET' })
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(secret)
  })
})

it('RETRYABLE_STATUSES cannot be changed by users', () => {
  expect(Object.isFrozen(RETRYABLE_STATUSES)).toBe(true)
  expect(() => {
    ;(RETRYABLE_STATUSES as number[]).push(400)
  }).toThrow(TypeError)
})
