// The fault suite (issue 4): each fault injected by the fake service's failNext, asserting the
// outcome, the error class and the number of attempts the server saw. Every log line and error
// the suite produces is collected and, at the end, searched for the key secret and issued tokens.
import { spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { inspect } from 'node:util'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  BadRequestError,
  ChatServiceClient,
  type ClientOptions,
  InternalServerError,
  RateLimitError,
  ResponseValidationError,
} from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type FakeServerHandle } from 'chat-service-sdk/testing'
import { until } from '../helpers/loopback.ts'
import { acceptSome } from '../helpers/pacing.ts'
import { sdkBundleUrl } from '../helpers/sdk-bundle.ts'

const seed = generateDataset({ seed: 7, agents: 3, customerUsers: 10, conversations: 4, messages: 40 })
const key = seed.companies[0]!.keys[0]!
const fake = createFakeChatService({ seed })
let server: FakeServerHandle
const clients: ChatServiceClient[] = []

const logLines: string[] = []
const errors: unknown[] = []
const tokens: string[] = []
const logger = {
  debug: (...args: unknown[]) => logLines.push(inspect(args, { depth: 10 })),
  info: (...args: unknown[]) => logLines.push(inspect(args, { depth: 10 })),
  warn: (...args: unknown[]) => logLines.push(inspect(args, { depth: 10 })),
  error: (...args: unknown[]) => logLines.push(inspect(args, { depth: 10 })),
}

function client(options: Partial<ClientOptions> = {}): ChatServiceClient {
  const c = new ChatServiceClient({
    baseUrl: server.url,
    keyId: key.keyId,
    keySecret: key.keySecret,
    logger,
    logLevel: 'debug',
    ...options,
  })
  clients.push(c)
  return c
}

/** Awaits `promise` expecting a rejection; records the error for the secret scan. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  const outcome = await promise.then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, error }),
  )
  if (outcome.ok) throw new Error('expected the call to fail')
  errors.push(outcome.error)
  return outcome.error
}

/** Requests the server saw, optionally for one path prefix. */
function attempts(path = '/rest/v1/'): number {
  return fake.requests.filter((r) => r.path.startsWith(path)).length
}

beforeAll(async () => {
  server = await fake.listen()
})
afterEach(async () => {
  fake.clearRequests()
  fake.clearFaults()
  await Promise.all(clients.splice(0).map((c) => c.close()))
})
afterAll(async () => {
  await server.close()
})

describe('retryable statuses', () => {
  for (const status of [408, 429, 500, 502, 503, 504]) {
    it(`${status} once, then success: 2 attempts, identical requests`, async () => {
      const c = client()
      // After a 429 the retry waits its turn at the paced rate: learned from calls accepted before, not the least rate's 2 s (test/helpers/pacing.ts).
      if (status === 429) await acceptSome(c)
      fake.clearRequests()
      fake.failNext(1, { status, headers: { 'retry-after-ms': '5' } })
      const page = await c.agents.list({ limit: 2 })
      expect(page.data).toHaveLength(2)
      expect(attempts()).toBe(2)
      const [first, second] = fake.requests
      expect(second!.rawPath).toBe(first!.rawPath)
      expect(second!.rawBody).toBe(first!.rawBody)
    })
  }

  it('without Retry-After, retries after its own (short) backoff', async () => {
    fake.failNext(1, { status: 503 })
    const started = performance.now()
    await client().agents.list()
    expect(attempts()).toBe(2)
    expect(performance.now() - started).toBeLessThan(5_000) // first retry waits < 0.5 s; generous bound
  })

  it('429 with Retry-After: 1 waits about a second, then succeeds', async () => {
    // A client that has had calls accepted: a first-ever 429 would pace its retry 2 s out, Retry-After or not (test/helpers/pacing.ts).
    const c = client()
    await acceptSome(c)
    fake.clearRequests()
    fake.failNext(1, { status: 429, headers: { 'retry-after': '1' } })
    const started = performance.now()
    await c.conversations.list()
    expect(performance.now() - started).toBeGreaterThanOrEqual(900)
    expect(attempts()).toBe(2)
  })

  it.each(['adaptive', 'off'] as const)(
    'a Retry-After beyond the 60 s maximum is thrown at once as RateLimitError that says why (pacing: %s)',
    async (pacing) => {
      fake.failNext(1, { status: 429, headers: { 'retry-after': '3600' } })
      const error = await failure(client({ pacing }).agents.list())
      expect(error).toBeInstanceOf(RateLimitError)
      expect((error as RateLimitError).headers['retry-after']).toBe('3600')
      expect((error as RateLimitError).retryAfterMs).toBe(3_600_000)
      expect((error as RateLimitError).message).toMatch(
        /^429 Too Many Requests: GET \/rest\/v1\/agents\S* \(request id [^)]+\): .*not retried: the service asked to wait 3,600,000 ms, more than the SDK waits for a retry \(at most 60,000 ms/,
      )
      expect(attempts()).toBe(1)
    },
  )

  it('a 503 asking for longer than 60 s says why it was not retried too', async () => {
    fake.failNext(1, { status: 503, headers: { 'retry-after': '120' } })
    const error = await failure(client().agents.list())
    expect(error).toBeInstanceOf(InternalServerError)
    expect((error as InternalServerError).message).toContain('not retried: the service asked to wait 120,000 ms')
    expect(attempts()).toBe(1)
  })

  it('runs out of retries: 1 + maxRetries attempts, then InternalServerError', async () => {
    fake.failNext(5, { status: 503, headers: { 'retry-after-ms': '1' } })
    const error = await failure(client({ maxRetries: 2 }).agents.list())
    expect(error).toBeInstanceOf(InternalServerError)
    expect((error as InternalServerError).status).toBe(503)
    expect(attempts()).toBe(3)
  })

  it('per-request maxRetries: 0 turns retries off (e.g. for token issuance)', async () => {
    fake.failNext(1, { status: 500, match: { method: 'POST' } })
    const error = await failure(client().auth.issueToken({ userId: 'ext_00001' }, { maxRetries: 0 }))
    expect(error).toBeInstanceOf(InternalServerError)
    expect(attempts()).toBe(1)
  })

  it('token issuance is retried like the rest (the service upserts the user)', async () => {
    fake.failNext(1, { status: 502, headers: { 'retry-after-ms': '1' }, match: { method: 'POST' } })
    const result = await client().auth.issueToken({ userId: 'retry-user' })
    tokens.push(result.token)
    expect(attempts('/rest/v1/auth/token')).toBe(2)
    expect(fake.findCustomerUserByExternalId(fake.companyIds()[0]!, 'retry-user')).toBeDefined()
  })

  it('other 4xx are never retried', async () => {
    fake.failNext(1, { status: 400, body: { error: { message: 'bad' } } })
    const error = await failure(client().agents.list())
    expect(error).toBeInstanceOf(BadRequestError)
    expect(attempts()).toBe(1)
  })
})

describe('connection faults', () => {
  it('reset mid-body once, then success', async () => {
    fake.failNext(1, { dropConnection: 'mid-body' })
    const page = await client().customerUsers.list()
    expect(page.data.length).toBeGreaterThan(0)
    expect(attempts()).toBe(2)
  })

  it('reset before headers, every attempt: APIConnectionError with the cause kept', async () => {
    fake.failNext(3, { dropConnection: 'before-headers' })
    const error = await failure(client({ maxRetries: 2 }).agents.list())
    expect(error).toBeInstanceOf(APIConnectionError)
    expect(error).not.toBeInstanceOf(APITimeoutError)
    expect((error as APIConnectionError).cause).toBeInstanceOf(Error)
    expect(attempts()).toBe(3)
  })

  it('connection refused: APIConnectionError after 1 + maxRetries attempts', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as { port: number }).port
    await new Promise<void>((resolve) =>
      closed.close(() => {
        resolve()
      }),
    )
    const before = logLines.length
    const error = await failure(client({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1 }).agents.list())
    expect(error).toBeInstanceOf(APIConnectionError)
    expect((error as APIConnectionError).message).toMatch(/ECONNREFUSED/)
    expect(logLines.slice(before).filter((line) => line.includes('(attempt ')).length).toBe(2)
  })

  it('slow headers past the timeout: APITimeoutError, retried', async () => {
    fake.failNext(2, { delayMs: 400 })
    const error = await failure(client({ timeout: 100, maxRetries: 1 }).agents.list())
    expect(error).toBeInstanceOf(APITimeoutError)
    expect(attempts()).toBe(2)
  })

  it('slow body past the timeout: APITimeoutError', async () => {
    fake.failNext(1, { bodyDelayMs: 400 })
    const error = await failure(client({ timeout: 100, maxRetries: 0 }).agents.list())
    expect(error).toBeInstanceOf(APITimeoutError)
    expect(attempts()).toBe(1)
  })

  it('a slow response within the timeout succeeds', async () => {
    fake.failNext(1, { delayMs: 50, bodyDelayMs: 50 })
    const page = await client({ timeout: 2_000 }).agents.list()
    expect(page.data.length).toBeGreaterThan(0)
    expect(attempts()).toBe(1)
  })
})

describe('bad responses', () => {
  it('truncated JSON on a 200: ResponseValidationError with the text kept, not retried', async () => {
    fake.failNext(1, { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":[{"id":"a1"' })
    const error = await failure(client().agents.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).body).toBe('{"data":[{"id":"a1"')
    expect(attempts()).toBe(1)
  })

  it('a non-JSON 200: ResponseValidationError', async () => {
    fake.failNext(1, { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>maintenance</html>' })
    const error = await failure(client().conversations.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).status).toBe(200)
    expect((error as ResponseValidationError).body).toBe('<html>maintenance</html>')
  })

  it('a 3xx to another origin is an APIError; the other origin receives nothing', async () => {
    let elsewhere = 0
    const other: Server = createServer((_req, res) => {
      elsewhere++
      res.end('{}')
    })
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
    const location = `http://127.0.0.1:${(other.address() as { port: number }).port}/rest/v1/agents`
    fake.failNext(1, { status: 307, headers: { location } })
    const error = await failure(client().agents.list())
    await new Promise<void>((resolve) =>
      other.close(() => {
        resolve()
      }),
    )
    expect(error).toBeInstanceOf(APIError)
    expect((error as APIError).status).toBe(307)
    expect((error as APIError).message).toContain('redirect not followed')
    expect(elsewhere).toBe(0)
    expect(attempts()).toBe(1)
  })

  it('a body over maxResponseBytes is cut off with ResponseValidationError (too_big), not retried', async () => {
    const error = await failure(client({ maxResponseBytes: 512 }).customerUsers.list({ limit: 10 }))
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).issues[0]?.code).toBe('too_big')
    expect(attempts()).toBe(1)
  })

  it('an oversized body without content-length is cut off while streaming', async () => {
    fake.failNext(1, { status: 200, body: 'x'.repeat(4096), bodyDelayMs: 1 })
    const error = await failure(client({ maxResponseBytes: 1024 }).agents.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).issues[0]?.code).toBe('too_big')
  })
})

describe('cancellation', () => {
  it("the caller's signal aborts a request in flight at once: APIUserAbortError, no retry", async () => {
    fake.failNext(1, { delayMs: 10_000 })
    const controller = new AbortController()
    const pending = client().agents.list({}, { signal: controller.signal })
    // Aborted once the request is in flight (it has reached the fake; a 50 ms timer once fired
    // before it was sent, on a loaded machine).
    await until(() => attempts() === 1)
    const started = performance.now()
    controller.abort()
    const error = await failure(pending)
    expect(error).toBeInstanceOf(APIUserAbortError)
    expect(performance.now() - started).toBeLessThan(5_000) // not the 10 s the fake holds it
    expect(attempts()).toBe(1)
  })

  it("the caller's signal aborts a retry wait: APIUserAbortError after one attempt", async () => {
    fake.failNext(1, { status: 503, headers: { 'retry-after': '30' } })
    const controller = new AbortController()
    const pending = client().agents.list({}, { signal: controller.signal })
    // Aborted once the retry wait has begun (logged just before it), not after a 200 ms timer.
    await until(() => logLines.some((line) => line.includes('retrying in 30000 ms')))
    controller.abort()
    const error = await failure(pending)
    expect(error).toBeInstanceOf(APIUserAbortError)
    expect(attempts()).toBe(1)
  })

  it('an already-aborted signal sends nothing', async () => {
    const error = await failure(client().customerUsers.update('cu_00001', { name: 'x' }, { signal: AbortSignal.abort() }))
    expect(error).toBeInstanceOf(APIUserAbortError)
    expect(attempts()).toBe(0)
  })

  it('leaves no timer or socket behind: a process can exit right after an abort or a timeout', async () => {
    fake.failNext(1, { status: 503, headers: { 'retry-after': '50' }, match: { path: '/rest/v1/conversations' } })
    fake.failNext(1, { delayMs: 30_000, match: { path: '/rest/v1/customer-users' } })
    // Today's src/, bundled with undici and zod (test/helpers/sdk-bundle.ts): the same code, started on less CPU.
    const script = `
      const { ChatServiceClient } = await import(${JSON.stringify(await sdkBundleUrl())})
      const client = new ChatServiceClient({ baseUrl: ${JSON.stringify(server.url)}, keyId: ${JSON.stringify(key.keyId)}, keySecret: ${JSON.stringify(key.keySecret)}, logLevel: 'off' })
      const ok = await client.agents.list()
      const c = new AbortController(); setTimeout(() => c.abort(), 100)
      const aborted = await client.conversations.list({}, { signal: c.signal }).catch((e) => e.name)
      const timedOut = await client.customerUsers.list({}, { timeout: 100, maxRetries: 0 }).catch((e) => e.name)
      console.log(JSON.stringify({ ok: ok.data.length > 0, aborted, timedOut }))
    `
    const started = performance.now()
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
      let stdout = ''
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
      const guard = setTimeout(() => {
        child.kill()
        reject(new Error('the child process did not exit: something kept the event loop alive'))
      }, 20_000)
      child.on('exit', (code) => {
        clearTimeout(guard)
        resolve({ code, stdout })
      })
    })
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual({ ok: true, aborted: 'APIUserAbortError', timedOut: 'APITimeoutError' })
    // Without close(), idle keep-alive sockets must not hold the process; the 50 s retry wait and 30 s response did not.
    expect(performance.now() - started).toBeLessThan(20_000)
  }, 30_000) // past the child's 20 s guard, so that a child held alive fails with the guard's message
})

describe('secret hygiene', () => {
  it('an issued token echoed back in a later error body is scrubbed', async () => {
    const c = client()
    const { token } = await c.auth.issueToken({ userId: 'ext_00002' })
    tokens.push(token)
    fake.failNext(1, { status: 400, body: { error: { message: `token ${token} and secret ${key.keySecret} rejected` } } })
    const error = await failure(c.agents.list())
    expect((error as BadRequestError).message).toContain('[REDACTED]')
    expect(JSON.stringify((error as BadRequestError).body)).not.toContain(token)
  })

  it('nothing the suite produced shows the key secret or an issued token', () => {
    expect(tokens.length).toBeGreaterThan(0)
    expect(errors.length).toBeGreaterThan(10)
    expect(logLines.length).toBeGreaterThan(20)
    const rendered = [
      ...logLines,
      ...errors.flatMap((error) => [String(error), inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error)]),
    ].join('\n')
    for (const secret of [key.keySecret, ...tokens]) expect(rendered.includes(secret)).toBe(false)
  })
})
