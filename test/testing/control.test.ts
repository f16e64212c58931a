// Driven from outside (issue 21): the control endpoints of a listening fake (/__fake/...), loopback
// peers only, every command validated with a clear 400. First in this process (each command and
// its validation), then the way users run it: `chat-service-fake` in a child process, steered over
// HTTP while the SDK talks to it.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { networkInterfaces } from 'node:os'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, InternalServerError } from 'chat-service-sdk'
import {
  createFakeChatService,
  generateDataset,
  type FakeChatService,
  type FakeServerHandle,
  type MessageRecord,
  type RecordedRequest,
} from 'chat-service-sdk/testing'
import { isLoopbackAddress } from '../../src/testing/control.ts'
import { call, fixtureSeed, KEY_A, type ErrorBody, type ListBody } from './helpers.ts'

let fake: FakeChatService
let server: FakeServerHandle

beforeAll(async () => {
  fake = createFakeChatService({ seed: fixtureSeed() })
  server = await fake.listen()
})
afterAll(() => server.close())
beforeEach(() => {
  fake.reset()
})

const command = <T = unknown>(method: string, path: string, body?: unknown, base = server.url) =>
  call<T>(base, method, `/__fake${path}`, body === undefined ? {} : { body })
const agents = (base = server.url) => call<ListBody<{ id: string }>>(base, 'GET', '/rest/v1/agents', { body: KEY_A })

describe('POST /__fake/faults', () => {
  it('queues a FaultSpec for the next n requests, a RegExp match and a binary body included', async () => {
    const queued = await command('POST', '/faults', { n: 2, fault: { status: 503, headers: { 'retry-after': '0' } } })
    expect(queued.status).toBe(200)
    expect(queued.json).toEqual({ queued: 2 })
    expect([(await agents()).status, (await agents()).status, (await agents()).status]).toEqual([503, 503, 200])

    await command('POST', '/faults', {
      n: 1,
      fault: { status: 500, match: { method: 'get', path: { regexp: '^/rest/v1/conversations/[^/]+/messages$' } } },
    })
    expect((await agents()).status).toBe(200)
    expect((await call(server.url, 'GET', '/rest/v1/conversations/conv_1/messages', { body: KEY_A })).status).toBe(500)

    const broken = gzipSync('{"data":').subarray(0, 10).toString('base64')
    await command('POST', '/faults', { n: 1, fault: { status: 200, bodyBase64: broken, headers: { 'content-encoding': 'gzip' } } })
    const res = await agents()
    expect(res.headers['content-length']).toBe(String(Buffer.from(broken, 'base64').length)) // sent as given, not compressed again
    expect(res.headers['content-encoding']).toBe('gzip')

    await command('POST', '/faults', { n: 1, fault: { body: { error: 'custom' } } })
    expect((await agents()).json).toEqual({ error: 'custom' })
  })

  it('DELETE /__fake/faults drops every queued fault', async () => {
    await command('POST', '/faults', { n: 5, fault: { status: 503 } })
    expect((await command('DELETE', '/faults')).status).toBe(204)
    expect((await agents()).status).toBe(200)
  })

  it.each([
    [{ fault: { status: 503 } }, 'n must be an integer of at least 1'],
    [{ n: 0, fault: { status: 503 } }, 'n must be an integer of at least 1'],
    [{ n: 1 }, 'fault must be a JSON object (a FaultSpec)'],
    [
      { n: 1, fault: { stauts: 503 } },
      'unknown fault member "stauts" (a FaultSpec has status, headers, body, bodyBase64, delayMs, bodyDelayMs, dropConnection, match)',
    ],
    [{ n: 1, fault: { status: 99 } }, 'fault status must be an integer from 200 to 599'],
    [{ n: 1, fault: { status: '503' } }, 'fault.status must be a number'],
    [{ n: 1, fault: { delayMs: -5 } }, 'fault delayMs must be a finite number of ms >= 0'],
    [{ n: 1, fault: { headers: { 'x-a': 'one\r\ntwo' } } }, 'fault.headers.x-a must be a string without CR, LF or NUL'],
    [{ n: 1, fault: { headers: { 'bad name': 'x' } } }, 'fault.headers: "bad name" is not a header name'],
    [{ n: 1, fault: { dropConnection: 'sometimes' } }, "fault.dropConnection must be 'before-headers' or 'mid-body'"],
    [{ n: 1, fault: { body: 'a', bodyBase64: 'YQ==' } }, 'give fault.body or fault.bodyBase64, not both'],
    [{ n: 1, fault: { bodyBase64: 'not base64!' } }, 'fault.bodyBase64 must be base64 text'],
    [{ n: 1, fault: { match: { path: { regexp: '(' } } } }, 'fault.match.path.regexp: Invalid regular expression'],
    [
      { n: 1, fault: { match: { path: 5 } } },
      'fault.match.path must be a path ("/rest/v1/agents") or { "regexp": "...", "flags"?: "..." }',
    ],
    [{ n: 1, fault: { match: { host: 'x' } } }, 'unknown fault.match member "host" (it has method, path)'],
    [{ n: 1, fault: {}, extra: true }, 'unknown member "extra" in the body of /__fake/faults (it takes n, fault)'],
    [[1, 2], 'the body of /__fake/faults must be a JSON object'],
  ])('refuses %j with 400 and says why', async (body, message) => {
    const res = await command<ErrorBody>('POST', '/faults', body)
    expect(res.status).toBe(400)
    expect(res.json.error.message).toContain(message)
    expect((await agents()).status).toBe(200) // nothing was queued
  })

  it('refuses a body that is not JSON, or not sent as JSON, with 400', async () => {
    const malformed = await call<ErrorBody>(server.url, 'POST', '/__fake/faults', { rawBody: '{"n":1,' })
    expect(malformed.status).toBe(400)
    expect(malformed.json.error.message).toContain('the body of /__fake/faults is not JSON')
    const form = await call<ErrorBody>(server.url, 'POST', '/__fake/faults', {
      rawBody: 'n=1',
      contentType: 'application/x-www-form-urlencoded',
    })
    expect(form.status).toBe(400)
    expect(form.json.error.message).toContain(
      'send the body of /__fake/faults as JSON, with content-type: application/json (got application/x-www-form-urlencoded)',
    )
    const empty = await call<ErrorBody>(server.url, 'POST', '/__fake/faults')
    expect(empty.json.error.message).toContain('POST /__fake/faults needs a JSON body')
  })
})

describe('POST /__fake/seed', () => {
  it('adds companies (their keys work at once) and records to known ones; answers the company ids', async () => {
    const res = await command('POST', '/seed', {
      companies: [
        {
          id: 'co_new',
          keys: [{ keyId: 'key_new', keySecret: 'secret_new_1234' }],
          agents: [
            { id: 'agt_n', name: 'N', active: true, created_at: '2024-01-01T00:00:00.000Z', updated_at: '2024-01-01T00:00:00.000Z' },
          ],
        },
        {
          id: 'co_a',
          keys: [],
          conversations: [
            {
              id: 'conv_new',
              title: 'New',
              customer_user_id: 'u_1',
              created_at: '2025-01-01T00:00:00.000Z',
              updated_at: '2025-01-01T00:00:00.000Z',
            },
          ],
        },
      ],
    })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ companyIds: ['co_a', 'co_b', 'co_empty', 'co_new'] })
    const asNew = await call<ListBody<{ id: string }>>(server.url, 'GET', '/rest/v1/agents', {
      body: { keyId: 'key_new', keySecret: 'secret_new_1234' },
    })
    expect(asNew.json.data.map((a) => a.id)).toEqual(['agt_n'])
    expect(fake.listConversations('co_a').map((c) => c.id)).toContain('conv_new')
  })

  it('refuses a malformed seed or a duplicate with 400, and applies nothing', async () => {
    const cases: [unknown, string][] = [
      [{ companies: 'all' }, 'invalid seed: expected { companies: [...] }'],
      [{ companies: [{ id: 'co_a', keys: [], agents: [{ id: 'agt_1' }] }] }, 'duplicate agent id agt_1 in company co_a'],
      [{ companies: [{ id: 'co_z', keys: [{ keyId: 'key_a', keySecret: 'other' }] }] }, 'key key_a is already registered'],
      [{ companies: [{ id: 'co_a', keys: [], messages: [{ id: 'm', conversation_id: 'nope' }] }] }, 'refers to unknown conversation nope'],
    ]
    for (const [body, message] of cases) {
      const res = await command<ErrorBody>('POST', '/seed', body)
      expect(res.status, message).toBe(400)
      expect(res.json.error.message).toContain(message)
    }
    expect(fake.companyIds()).toEqual(['co_a', 'co_b', 'co_empty'])
  })
})

describe('data changes: POST /__fake/append-messages, /delete-message, /delete-conversation', () => {
  it('append-messages appends a count or seeds and answers the stored messages', async () => {
    const res = await command<{ data: MessageRecord[] }>('POST', '/append-messages', {
      companyId: 'co_a',
      conversationId: 'conv_1',
      messages: [{ content: 'from outside', role: 'user' }],
    })
    expect(res.status).toBe(200)
    expect(res.json.data).toEqual([expect.objectContaining({ id: 'msg_fake_000001', content: 'from outside', conversation_id: 'conv_1' })])
    expect(
      (await command<{ data: MessageRecord[] }>('POST', '/append-messages', { companyId: 'co_a', conversationId: 'conv_1', messages: 2 }))
        .json.data,
    ).toHaveLength(2)
    expect(fake.listConversations('co_a')[0]!.message_count).toBe(7)
  })

  it('answers 404 for an unknown company or conversation, 400 for bad input', async () => {
    const cases: [string, unknown, number, string][] = [
      ['/append-messages', { companyId: 'co_x', conversationId: 'conv_1', messages: 1 }, 404, 'appendMessages: unknown company co_x'],
      [
        '/append-messages',
        { companyId: 'co_a', conversationId: 'conv_x', messages: 1 },
        404,
        'unknown conversation conv_x in company co_a',
      ],
      [
        '/append-messages',
        { companyId: 'co_a', conversationId: 'conv_1', messages: [{ content: 'x', role: 'bot' }] },
        400,
        "messages[0].role must be 'user' or 'assistant'",
      ],
      ['/append-messages', { companyId: 'co_a', conversationId: 'conv_1' }, 400, 'messages must be a count or an array of MessageSeed'],
      ['/append-messages', { companyId: 7, conversationId: 'conv_1', messages: 1 }, 400, 'companyId must be a string'],
      ['/append-messages', { companyId: 'co_a', conversationId: 'conv_1', messages: 1, role: 'user' }, 400, 'unknown member "role"'],
      [
        '/delete-message',
        { companyId: 'co_a', conversationId: 'conv_1', messageId: 'm_x' },
        404,
        'unknown message m_x in conversation conv_1',
      ],
      ['/delete-message', { companyId: 'co_a', conversationId: 'conv_1' }, 400, 'messageId must be a string'],
      ['/delete-conversation', { companyId: 'co_a', conversationId: 'conv_b' }, 404, 'unknown conversation conv_b in company co_a'],
    ]
    for (const [path, body, status, message] of cases) {
      const res = await command<ErrorBody>('POST', path, body)
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(status)
      expect(res.json.error.message).toContain(message)
    }
    expect(fake.listMessages('co_a', 'conv_1')).toHaveLength(4)
  })

  it('delete-message and delete-conversation answer 204 and change the data', async () => {
    expect((await command('POST', '/delete-message', { companyId: 'co_a', conversationId: 'conv_1', messageId: 'm_a' })).status).toBe(204)
    expect(fake.listMessages('co_a', 'conv_1').map((m) => m.id)).toEqual(['m_first', 'm_b', 'm_c'])
    expect((await command('POST', '/delete-conversation', { companyId: 'co_a', conversationId: 'conv_1' })).status).toBe(204)
    expect(fake.listConversations('co_a').map((c) => c.id)).toEqual(['conv_declared', 'conv/2 ü'])
  })
})

describe('GET /__fake/requests', () => {
  it('is the request log, oldest first, with statuses and request ids, and without a key secret anywhere', async () => {
    await agents()
    await call(server.url, 'PUT', '/rest/v1/customer-users/u_1?note=secret_a', {
      body: { ...KEY_A, name: 'x', metadata: { copy: 'secret_a' } },
      headers: { authorization: 'Bearer tok', 'x-echo': KEY_A.keySecret },
    })
    await call(server.url, 'GET', '/rest/v1/agents', { body: { keyId: 'key_a', keySecret: 'a-wrong-one' } })
    const res = await command<{ recording: boolean; data: RecordedRequest[] }>('GET', '/requests')
    expect(res.status).toBe(200)
    expect(res.text).not.toContain(KEY_A.keySecret)
    expect(res.text).not.toContain('a-wrong-one')
    expect(res.text).not.toContain('Bearer tok')
    const [first, put, wrong] = res.json.data
    expect(res.json.recording).toBe(true)
    expect(res.json.data).toHaveLength(3) // the commands themselves are not recorded
    expect(first).toMatchObject({ method: 'GET', path: '/rest/v1/agents', status: 200, body: { keyId: 'key_a', keySecret: '[redacted]' } })
    expect(first!.requestId).toBe(fake.requests[0]!.requestId)
    expect(put).toMatchObject({
      method: 'PUT',
      rawPath: '/rest/v1/customer-users/u_1?note=[redacted]',
      query: { note: '[redacted]' },
      status: 200,
      body: { keyId: 'key_a', keySecret: '[redacted]', name: 'x', metadata: { copy: '[redacted]' } },
      headers: expect.objectContaining({ authorization: '[redacted]', 'x-echo': '[redacted]' }) as unknown,
    })
    expect(JSON.parse(put!.rawBody!)).toEqual(put!.body)
    expect(wrong).toMatchObject({ status: 401, body: { keySecret: '[redacted]' } })
    // The fake's own log still has them: only what goes out over HTTP is redacted.
    expect(fake.requests[0]!.body).toEqual(KEY_A)
  })

  it('DELETE /__fake/requests empties the log; POST /__fake/reset returns to the seed', async () => {
    await agents()
    expect((await command('DELETE', '/requests')).status).toBe(204)
    expect(fake.requests).toHaveLength(0)
    fake.deleteConversation('co_a', 'conv_1')
    expect((await command('POST', '/reset')).status).toBe(204)
    expect(fake.listConversations('co_a')).toHaveLength(3)
  })
})

describe('the control endpoints themselves', () => {
  it('answer an unknown command 404 (listing the commands) and a wrong method 405 with Allow', async () => {
    const unknown = await command<ErrorBody>('POST', '/fault', {})
    expect(unknown.status).toBe(404)
    expect(unknown.json.error.message).toContain(
      'No control endpoint /__fake/fault; there are: POST /__fake/faults, DELETE /__fake/faults, POST /__fake/seed',
    )
    const wrong = await command('PUT', '/requests', {})
    expect(wrong.status).toBe(405)
    expect(wrong.headers['allow']).toBe('GET, DELETE')
  })

  it('carry an x-request-id, and are not service traffic: not recorded, never faulted, never rate-limited', async () => {
    const limited = createFakeChatService({ seed: fixtureSeed(), rateLimit: { requestsPerSecond: 0.001, burst: 1 } })
    const limitedServer = await limited.listen()
    try {
      limited.failNext(1, { status: 503 })
      const responses = []
      for (let i = 0; i < 5; i++) responses.push(await command('GET', '/requests', undefined, limitedServer.url))
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
      expect(new Set(responses.map((r) => r.headers['x-request-id'])).size).toBe(5)
      expect(limited.requests).toHaveLength(0)
      expect((await agents(limitedServer.url)).status).toBe(503) // the fault was still queued
      expect((await agents(limitedServer.url)).status).toBe(200)
      expect((await agents(limitedServer.url)).status).toBe(429)
    } finally {
      await limitedServer.close()
    }
  })

  it('refuse any peer that is not loopback with 403, while the API still serves it', async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal)
    // Every machine that runs the tests (CI included) has a network interface besides loopback.
    expect(external, 'a non-loopback IPv4 address of this machine').toBeDefined()
    const everywhere = await fake.listen({ host: '0.0.0.0' })
    try {
      const port = new URL(everywhere.url).port
      const base = `http://${external!.address}:${port}`
      const refused = await command<ErrorBody>('GET', '/requests', undefined, base)
      expect(refused.status).toBe(403)
      expect(refused.json.error.message).toBe(
        `The fake's control endpoints (/__fake/...) accept loopback peers only; this request came from ${external!.address}`,
      )
      expect((await command('POST', '/faults', { n: 1, fault: { status: 503 } }, base)).status).toBe(403)
      expect((await agents(base)).status).toBe(200) // nothing was queued, and the API answers
      expect((await command('GET', '/requests', undefined, `http://127.0.0.1:${port}`)).status).toBe(200)
    } finally {
      await everywhere.close()
    }
  })

  it('isLoopbackAddress: 127.0.0.0/8, ::1 and IPv4-mapped loopback only', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::FFFF:127.0.0.9'])
      expect(isLoopbackAddress(address), address).toBe(true)
    for (const address of ['10.0.0.1', '192.168.1.2', '::ffff:10.0.0.1', 'fe80::1', '0.0.0.0', '128.0.0.1', '1127.0.0.1', undefined]) {
      expect(isLoopbackAddress(address), String(address)).toBe(false)
    }
  })
})

// ---------------------------------------------------------------------------------------------
// `chat-service-fake` in a child process, steered from this one.

const CLI = fileURLToPath(new URL('../../src/testing/cli.ts', import.meta.url))

describe('npx chat-service-fake, steered from outside', () => {
  it('takes faults, seeds, appended messages and serves its request log while the SDK uses it', async () => {
    const child = spawn(
      process.execPath,
      ['--no-warnings', CLI, '--port', '0', '--json', '--seed', '3', '--conversations', '4', '--messages', '20'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    const exit = once(child, 'exit')
    try {
      const [line] = (await once(child.stdout.setEncoding('utf8'), 'data')) as [string]
      const options = JSON.parse(line) as { baseUrl: string; keyId: string; keySecret: string }
      const client = new ChatServiceClient({ ...options, maxRetries: 0, logLevel: 'off' })
      try {
        const steer = (path: string, body?: unknown) => command(body === undefined ? 'GET' : 'POST', path, body, options.baseUrl)

        // A fault: the SDK sees the service fail.
        expect(
          (await steer('/faults', { n: 1, fault: { status: 500, body: { error: { status: 500, message: 'injected from outside' } } } }))
            .status,
        ).toBe(200)
        await expect(client.agents.list()).rejects.toThrow(InternalServerError)

        // Data that changes: the SDK reads the appended messages.
        const before = (await client.conversations.messages.list('conv_00001', { limit: 100 })).pagination.total
        const appended = await steer('/append-messages', { companyId: 'comp_1', conversationId: 'conv_00001', messages: 3 })
        expect(appended.status).toBe(200)
        const after = await client.conversations.messages.list('conv_00001', { limit: 100 })
        expect(after.pagination.total).toBe(before + 3)
        expect(after.data.slice(-3).map((m) => m.id)).toEqual(['msg_fake_000001', 'msg_fake_000002', 'msg_fake_000003'])

        // A seed: a new conversation appears at the end of the list.
        const user = (await client.customerUsers.list({ limit: 1 })).data[0]!
        const seeded = await steer('/seed', {
          companies: [
            {
              id: 'comp_1',
              keys: [],
              conversations: [
                {
                  id: 'conv_late',
                  title: 'Late',
                  customer_user_id: user.id,
                  created_at: '2099-01-01T00:00:00.000Z',
                  updated_at: '2099-01-01T00:00:00.000Z',
                },
              ],
            },
          ],
        })
        expect(seeded.status).toBe(200)
        expect((await client.conversations.list({ limit: 100 })).data.at(-1)!.id).toBe('conv_late')

        // Validation is the same as in-process.
        expect((await steer('/append-messages', { companyId: 'comp_1', conversationId: 'conv_00001', messages: -1 })).status).toBe(400)

        // The request log: what the SDK sent, with statuses, and never the key secret.
        const log = await steer('/requests')
        expect(log.text).not.toContain(options.keySecret)
        const data = (log.json as { data: RecordedRequest[] }).data
        expect(data.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
          'GET /rest/v1/agents 500',
          'GET /rest/v1/conversations/conv_00001/messages 200',
          'GET /rest/v1/conversations/conv_00001/messages 200',
          'GET /rest/v1/customer-users 200',
          'GET /rest/v1/conversations 200',
        ])
        expect(data[0]!.body).toEqual({ keyId: options.keyId, keySecret: '[redacted]' })
      } finally {
        await client.close()
      }
    } finally {
      child.kill('SIGTERM')
      await exit
    }
  })

  it('keeps no log with --record-requests 0, and says so', async () => {
    const child = spawn(process.execPath, ['--no-warnings', CLI, '--port', '0', '--json', '--record-requests', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exit = once(child, 'exit')
    try {
      const [line] = (await once(child.stdout.setEncoding('utf8'), 'data')) as [string]
      const options = JSON.parse(line) as { baseUrl: string; keyId: string; keySecret: string }
      await call(options.baseUrl, 'GET', '/rest/v1/agents', { body: { keyId: options.keyId, keySecret: options.keySecret } })
      const log = await command<{ recording: boolean; data: unknown[] }>('GET', '/requests', undefined, options.baseUrl)
      expect(log.json).toEqual({ recording: false, data: [] })
    } finally {
      child.kill('SIGTERM')
      await exit
    }
  })
})

describe('recordRequests: n', () => {
  it('keeps the latest n requests', async () => {
    const small = createFakeChatService({ seed: generateDataset({ seed: 1, conversations: 1, messages: 1 }), recordRequests: 2 })
    const smallServer = await small.listen()
    try {
      const body = smallServer.clientOptions()
      for (const path of ['/rest/v1/agents', '/rest/v1/conversations', '/rest/v1/customer-users'])
        await call(smallServer.url, 'GET', path, { body })
      expect(small.requests.map((r) => r.path)).toEqual(['/rest/v1/conversations', '/rest/v1/customer-users'])
    } finally {
      await smallServer.close()
    }
    expect(() => createFakeChatService({ recordRequests: -1 })).toThrow('recordRequests must be a boolean or an integer of at least 0')
  })
})
