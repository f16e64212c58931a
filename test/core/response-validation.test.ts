/**
 * Tolerant response validation (0.2): with `responseValidation: 'warn'` (client option or per
 * call) a response that does not match its schema is returned exactly as the service sent it, and
 * each distinct issue is logged once per client at `warn` through the client's logger, without any
 * secret. `'strict'` (the default) throws ResponseValidationError keeping the issues and the raw
 * body. A broken `pagination` block throws under `'warn'` too: paging cannot go on without it.
 */
import { inspect } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, ResponseValidationError } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, conversation, customerUser, message, tokenResponse } from '../helpers/fixtures.ts'
import { pageOf, rejection, recordingLogger, type LoopbackServer, type RecordingLogger, useLoopback } from '../helpers/loopback.ts'

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.d2Fybi10b2tlbi1wYXlsb2Fk.c2lnLXdhcm4tdG9rZW4'

let server: LoopbackServer
let logger: RecordingLogger
let client: ChatServiceClient

useLoopback((started) => {
  server = started
})
beforeEach(() => {
  logger = recordingLogger()
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0, logger })
})
afterEach(async () => {
  await client.close()
})

/** Three pages of conversations, 2 per page; every page has one record with `title: null`, at index 0, 1, 0. */
function conversationsWithNullTitles(): Record<string, unknown>[] {
  const all = [1, 2, 3, 4, 5, 6].map((i) => ([1, 4, 5].includes(i) ? { ...conversation(i), title: null } : conversation(i)))
  server.respond((request) => {
    const page = pageOf(request)
    return { body: { data: all.slice((page - 1) * 2, page * 2), pagination: { page, limit: 2, total: 6, total_pages: 3 } } }
  })
  return all
}

/** Every rendering of every argument of every log call. */
function logText(recorded: RecordingLogger): string {
  return recorded.calls
    .flatMap((call) => call.args.map((arg) => `${inspect(arg, { depth: 10, showHidden: true })}\n${JSON.stringify(arg)}`))
    .join('\n')
}

describe("responseValidation: 'warn'", () => {
  it('a page with a record whose title is null is returned as sent, with one warning naming the path', async () => {
    const tolerant = client.withOptions({ responseValidation: 'warn' })
    const all = conversationsWithNullTitles()
    const page = await tolerant.conversations.list({ limit: 2 })
    expect(page.data).toStrictEqual(all.slice(0, 2))
    expect(page.data[0]?.title).toBeNull()
    const warnings = logger.messages('warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('conversations.list')
    expect(warnings[0]).toContain('title')
  })

  it('iterating three pages that all have the odd record logs one warning line, and yields every record as sent', async () => {
    const tolerant = new ChatServiceClient({
      baseUrl: server.origin,
      keyId: KEY_ID,
      keySecret: KEY_SECRET,
      logger,
      responseValidation: 'warn',
    })
    try {
      const all = conversationsWithNullTitles()
      const seen: unknown[] = []
      for await (const item of tolerant.conversations.list({ limit: 2 })) seen.push(item)
      expect(seen).toStrictEqual(all)
      expect(server.arrivals).toHaveLength(3)
      expect(logger.calls.filter((call) => call.level === 'warn')).toHaveLength(1)
    } finally {
      await tolerant.close()
    }
  })

  it('the per-call option works on a strict client, and each distinct issue path is logged once', async () => {
    const odd = { ...conversation(1), title: null, message_count: 'many' }
    server.respond(() => ({
      body: { data: [odd, { ...conversation(2), title: 7 }], pagination: { page: 1, limit: 20, total: 2, total_pages: 1 } },
    }))
    const page = await client.conversations.list({}, { responseValidation: 'warn' })
    expect(page.data).toStrictEqual([odd, { ...conversation(2), title: 7 }])
    await client.conversations.list({}, { responseValidation: 'warn' })
    const warnings = logger.messages('warn')
    expect(warnings).toHaveLength(2) // title and message_count, each once
    expect(warnings.filter((w) => w.includes('title'))).toHaveLength(1)
    expect(warnings.filter((w) => w.includes('message_count'))).toHaveLength(1)
  })

  it('"once" is per client: another client logs the same issue again', async () => {
    conversationsWithNullTitles()
    const otherLogger = recordingLogger()
    const other = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logger: otherLogger })
    try {
      await client.conversations.list({ limit: 2 }, { responseValidation: 'warn' })
      await client.conversations.list({ limit: 2 }, { responseValidation: 'warn' })
      await other.conversations.list({ limit: 2 }, { responseValidation: 'warn' })
      expect(logger.messages('warn')).toHaveLength(1)
      expect(otherLogger.messages('warn')).toHaveLength(1)
    } finally {
      await other.close()
    }
  })

  it('the warning holds no secret: not the key secret in the path, not the token, not a secret-valued field', async () => {
    server.respond((request) =>
      request.method === 'POST'
        ? { body: tokenResponse(TOKEN) }
        : {
            body: {
              data: [{ ...message(1, KEY_SECRET), content: null, role: TOKEN }],
              pagination: { page: 1, limit: 50, total: 1, total_pages: 1 },
              conversation: { id: KEY_SECRET, title: TOKEN, extra: KEY_SECRET },
            },
          },
    )
    await client.auth.issueToken({ userId: 'ext-1' })
    const tolerant = client.withOptions({ responseValidation: 'warn', logLevel: 'debug' })
    const page = await tolerant.conversations.messages.list(KEY_SECRET)
    expect(page.data[0]?.content).toBeNull()
    expect(logger.messages('warn').length).toBeGreaterThan(0)
    const text = logText(logger)
    expect(text).not.toContain(KEY_SECRET)
    expect(text).not.toContain(encodeURIComponent(KEY_SECRET))
    expect(text).not.toContain(TOKEN)
  })

  it('nothing is logged below the client’s level: logLevel error hides the warning, and the data still comes back', async () => {
    conversationsWithNullTitles()
    const quiet = client.withOptions({ responseValidation: 'warn', logLevel: 'error' })
    const page = await quiet.conversations.list({ limit: 2 })
    expect(page.data).toHaveLength(2)
    expect(logger.calls).toEqual([])
  })
})

describe("responseValidation: 'strict' (the default)", () => {
  it('throws ResponseValidationError keeping the issues and the raw body, and logs nothing', async () => {
    const body = {
      data: [conversation(1), { ...conversation(2), title: null }],
      pagination: { page: 1, limit: 20, total: 2, total_pages: 1 },
    }
    server.respond(() => ({ headers: { 'x-request-id': 'req_strict' }, body }))
    const error = await rejection(client.conversations.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    const { issues, body: kept, status, requestId } = error as ResponseValidationError
    expect(issues.map((issue) => issue.path)).toStrictEqual([['data', 1, 'title']])
    expect(kept).toStrictEqual(body)
    expect(status).toBe(200)
    expect(requestId).toBe('req_strict')
    expect(logger.calls).toEqual([])
  })

  it("a per-call 'strict' overrides a client's 'warn'", async () => {
    conversationsWithNullTitles()
    const tolerant = client.withOptions({ responseValidation: 'warn' })
    await expect(tolerant.conversations.list({ limit: 2 }, { responseValidation: 'strict' })).rejects.toBeInstanceOf(
      ResponseValidationError,
    )
  })
})

describe("what 'warn' still refuses", () => {
  it.each([
    ['total_pages missing', { page: 1, limit: 2, total: 6 }],
    ['total_pages not a number', { page: 1, limit: 2, total: 6, total_pages: 'three' }],
    ['page 0', { page: 0, limit: 2, total: 6, total_pages: 3 }],
  ])('a broken pagination block (%s) throws ResponseValidationError', async (_name, pagination) => {
    server.respond(() => ({ body: { data: [customerUser(1)], pagination } }))
    const error = await rejection(client.customerUsers.list({ limit: 2 }, { responseValidation: 'warn' }))
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).issues.some((issue) => issue.path[0] === 'pagination')).toBe(true)
  })

  it('a pagination block missing altogether, or data that is not an array, throws', async () => {
    server.respond(() => ({ body: { data: [customerUser(1)] } }))
    await expect(client.customerUsers.list({}, { responseValidation: 'warn' })).rejects.toBeInstanceOf(ResponseValidationError)
    server.respond(() => ({ body: { data: 'none', pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } } }))
    await expect(client.customerUsers.list({}, { responseValidation: 'warn' })).rejects.toBeInstanceOf(ResponseValidationError)
  })

  it('a body that is not JSON throws', async () => {
    server.respond(() => ({ headers: { 'content-type': 'text/html' }, body: '<html>maintenance</html>' }))
    await expect(client.agents.list({}, { responseValidation: 'warn' })).rejects.toBeInstanceOf(ResponseValidationError)
  })
})
