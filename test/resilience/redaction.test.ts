/**
 * Redaction where an id goes (issue 11): the key secret or an issued token passed as a path
 * parameter (`customerUsers.update(secret, ...)`, `messages.list(token)`) travels in the path, and
 * then must not show in any rendering of the error that comes back: message, `.path`, String(),
 * util.inspect (hidden fields), JSON.stringify, stack, body and headers; nor in the logs. Also for
 * secrets with characters that get percent-encoded (`+`, `/`, `=`, space, non-ASCII), in the raw,
 * percent-encoded and form-encoded forms. A very short secret keeps messages readable, is still
 * scrubbed where it stands as a whole path segment, and is warned about at construction.
 */
import { inspect } from 'node:util'
import { beforeEach, describe, expect, it } from 'vitest'
import {
  APIConnectionError,
  APITimeoutError,
  ChatServiceClient,
  InternalServerError,
  NotFoundError,
  ResponseValidationError,
  type ClientOptions,
} from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, tokenResponse } from '../helpers/fixtures.ts'
import { rejection, recordingLogger, type LoopbackServer, type RecordingLogger, useLoopback } from '../helpers/loopback.ts'

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.cmVkYWN0aW9uLXRva2Vu.cmVkYWN0LXNpZ25hdHVyZQ'
/** A secret with characters that percent-encoding (and form-encoding) change. */
const ODD_SECRET = 'ks+live/Q9v=X3 mR7€ü~!'

let server: LoopbackServer

useLoopback((started) => {
  server = started
})
beforeEach(() => {
  echo404()
})

/** A 404 that echoes the request back in every way a service might: raw, decoded, in headers and body. */
function echo404(status = 404): void {
  server.respond((request) => {
    let decoded = request.target
    try {
      decoded = decodeURIComponent(request.target)
    } catch {
      // keep it raw
    }
    return {
      status,
      headers: { 'x-echo-target': request.target, 'x-request-id': 'req_echo', location: `https://chat.test${request.target}` },
      body: {
        error: `No record at ${decoded}`,
        target: request.target,
        decoded,
        form: new URLSearchParams({ q: decoded }).toString(),
        request: JSON.parse(request.body) as unknown,
        [decoded]: 'as a key',
      },
    }
  })
}

function makeClient(keySecret: string, extra: Partial<ClientOptions> = {}): { client: ChatServiceClient; logger: RecordingLogger } {
  const logger = recordingLogger()
  const client = new ChatServiceClient({
    baseUrl: server.origin,
    keyId: KEY_ID,
    keySecret,
    maxRetries: 0,
    logger,
    logLevel: 'debug',
    ...extra,
  })
  return { client, logger }
}

/** The forms a secret can take in text: as given, percent-encoded, form-encoded. */
function forms(secret: string): string[] {
  return [...new Set([secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)])]
}

/** `JSON.stringify` typed as it behaves: `undefined` for `undefined`. */
const stringify = (value: unknown): string | undefined => JSON.stringify(value)

/** Every way a user might render an error for a log or a ticket. */
function renderings(error: unknown): Record<string, string> {
  const e = error as Error & { path?: unknown; body?: unknown; headers?: unknown }
  return {
    message: e.message,
    path: String(e.path),
    'String()': String(error),
    'util.inspect()': inspect(error),
    'util.inspect(showHidden, depth 10)': inspect(error, { showHidden: true, depth: 10 }),
    'JSON.stringify()': JSON.stringify(error),
    stack: e.stack ?? '',
    body: stringify(e.body) ?? '',
    headers: stringify(e.headers) ?? '',
  }
}

function expectScrubbed(error: unknown, ...secrets: string[]): void {
  for (const [how, text] of Object.entries(renderings(error))) {
    for (const secret of secrets) {
      for (const form of forms(secret)) expect(text, `${how} shows ${JSON.stringify(form)}`).not.toContain(form)
    }
  }
}

function expectLogsScrubbed(logger: RecordingLogger, ...secrets: string[]): void {
  const text = logger.calls.flatMap((call) => call.args.map((arg) => `${inspect(arg, { depth: 10 })} ${JSON.stringify(arg)}`)).join('\n')
  for (const secret of secrets) for (const form of forms(secret)) expect(text).not.toContain(form)
}

describe.each([
  ['an ordinary key secret', KEY_SECRET],
  ['a key secret with + / = space and non-ASCII', ODD_SECRET],
])('%s passed where an id goes', (_name, secret) => {
  it('customerUsers.update(secret, ...): a 404 that echoes it everywhere shows it nowhere', async () => {
    const { client, logger } = makeClient(secret)
    try {
      const error = await rejection(client.customerUsers.update(secret, { name: 'n' }))
      expect(error).toBeInstanceOf(NotFoundError)
      expect(server.arrivals[0]?.target).toBe(`/rest/v1/customer-users/${encodeURIComponent(secret)}`) // it did travel
      expect((error as NotFoundError).path).toBe('/rest/v1/customer-users/[REDACTED]')
      expect((error as NotFoundError).requestId).toBe('req_echo')
      expectScrubbed(error, secret)
      expectLogsScrubbed(logger, secret)
    } finally {
      await client.close()
    }
  })

  it('conversations.messages.list(secret): the same for a list call, a 500 included', async () => {
    const { client, logger } = makeClient(secret)
    try {
      const notFound = await rejection(client.conversations.messages.list(secret, { limit: 5 }))
      expect(notFound).toBeInstanceOf(NotFoundError)
      expectScrubbed(notFound, secret)
      echo404(500)
      const failed = await rejection(client.conversations.messages.list(secret))
      expect(failed).toBeInstanceOf(InternalServerError)
      expectScrubbed(failed, secret)
      expectLogsScrubbed(logger, secret)
    } finally {
      await client.close()
    }
  })

  it('a connection dropped, a timeout, and a response that fails its schema: their errors do not show it either', async () => {
    const { client, logger } = makeClient(secret, { maxRetries: 1 })
    try {
      server.respond(() => 'destroy')
      const dropped = await rejection(client.customerUsers.update(secret, { name: 'n' }))
      expect(dropped).toBeInstanceOf(APIConnectionError)
      expectScrubbed(dropped, secret)
      expectScrubbed((dropped as Error).cause, secret)

      server.respond(() => ({ delayMs: 300, body: {} }))
      const late = await rejection(client.customerUsers.update(secret, { name: 'n' }, { timeout: 50, maxRetries: 0 }))
      expect(late).toBeInstanceOf(APITimeoutError)
      expectScrubbed(late, secret)

      server.respond((request) => ({ body: { id: decodeURIComponent(request.target), name: 42 } }))
      const odd = await rejection(client.customerUsers.update(secret, { name: 'n' }))
      expect(odd).toBeInstanceOf(ResponseValidationError)
      expectScrubbed(odd, secret)
      expectLogsScrubbed(logger, secret)
    } finally {
      await client.close()
    }
  })
})

describe('an issued token passed where an id goes', () => {
  it('messages.list(token) and customerUsers.update(token, ...): errors and logs do not show the token', async () => {
    const { client, logger } = makeClient(KEY_SECRET)
    try {
      server.respond(() => ({ body: tokenResponse(TOKEN) }))
      const { token } = await client.auth.issueToken({ userId: 'ext-1', agentId: 'agent-2' })
      expect(token).toBe(TOKEN)
      echo404()
      const fromList = await rejection(client.conversations.messages.list(token))
      expect(fromList).toBeInstanceOf(NotFoundError)
      expect(server.arrivals.at(-1)?.target).toContain(TOKEN)
      expect((fromList as NotFoundError).path).toBe('/rest/v1/conversations/[REDACTED]/messages?page=1')
      expectScrubbed(fromList, TOKEN, KEY_SECRET)
      const fromUpdate = await rejection(client.customerUsers.update(token, { email: 'a@b.io' }))
      expectScrubbed(fromUpdate, TOKEN, KEY_SECRET)
      expectLogsScrubbed(logger, TOKEN, KEY_SECRET)
    } finally {
      await client.close()
    }
  })

  it('a token with characters that get percent-encoded is scrubbed in every form', async () => {
    const oddToken = 'tok/with+odd=chars and ünïcode'
    const { client } = makeClient(KEY_SECRET)
    try {
      server.respond(() => ({ body: tokenResponse(oddToken) }))
      await client.auth.issueToken({ userId: 'ext-1', agentId: 'agent-2' })
      echo404()
      const error = await rejection(client.conversations.messages.list(oddToken))
      expect((error as NotFoundError).path).toBe('/rest/v1/conversations/[REDACTED]/messages?page=1')
      expectScrubbed(error, oddToken)
    } finally {
      await client.close()
    }
  })
})

describe('a very short key secret', () => {
  it('is warned about at construction, at level warn through the client’s logger, without showing it', async () => {
    const { client, logger } = makeClient('ab', { logLevel: 'warn' })
    try {
      const warnings = logger.messages('warn')
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(/keySecret/)
      expect(warnings[0]).toMatch(/short/)
      expect(warnings[0]).not.toMatch(/(?<![\p{L}\p{N}])ab(?![\p{L}\p{N}])/u)
      expect(logger.calls.filter((call) => call.level !== 'warn')).toEqual([])
    } finally {
      await client.close()
    }
  })

  it('keeps messages readable: /rest/v1/agents and words that contain it stay intact', async () => {
    const { client } = makeClient('ab')
    try {
      server.respond(() => ({ status: 500, body: { error: 'unable to reach the database: absent table' } }))
      const error = await rejection(client.agents.list())
      expect(error).toBeInstanceOf(InternalServerError)
      expect((error as InternalServerError).path).toBe('/rest/v1/agents?page=1')
      expect((error as Error).message).toContain('GET /rest/v1/agents?page=1')
      expect((error as Error).message).toContain('unable to reach the database: absent table')
    } finally {
      await client.close()
    }
  })

  it('is still scrubbed where it stands as a whole path segment', async () => {
    const { client } = makeClient('ab')
    try {
      const error = await rejection(client.customerUsers.update('ab', { name: 'n' }))
      expect(server.arrivals[0]?.target).toBe('/rest/v1/customer-users/ab')
      expect((error as NotFoundError).path).toBe('/rest/v1/customer-users/[REDACTED]')
      for (const [how, text] of Object.entries(renderings(error))) {
        expect(text, how).not.toMatch(/(?<![\p{L}\p{N}])ab(?![\p{L}\p{N}])/u)
      }
      expect((error as Error).message).toContain('/rest/v1/customer-users/[REDACTED]')
    } finally {
      await client.close()
    }
  })

  it('a short secret that needs percent-encoding is scrubbed as a segment in its encoded form', async () => {
    const { client } = makeClient('é+1')
    try {
      const error = await rejection(client.customerUsers.update('é+1', { name: 'n' }))
      expect(server.arrivals[0]?.target).toBe('/rest/v1/customer-users/%C3%A9%2B1')
      expect((error as NotFoundError).path).toBe('/rest/v1/customer-users/[REDACTED]')
      // Where it stands as a segment (the path, the message, the echoed target); a short secret
      // inside a longer run of text, such as the form-encoded echo of the whole path, is not scrubbed.
      const { message, path, stack } = renderings(error)
      const headers = (error as NotFoundError).headers
      for (const text of [message, path, stack, headers['x-echo-target'], headers['location']]) {
        for (const form of forms('é+1')) expect(text).not.toContain(form)
      }
    } finally {
      await client.close()
    }
  })
})
