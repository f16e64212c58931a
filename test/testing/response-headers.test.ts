// What real responses carry (issue 21): a unique x-request-id on every response of the fake, in
// both modes, faults and synthetic responses included; and, in listen mode, compression when the
// request asks for it (accept-encoding with q-values and identity), with content-encoding and vary.
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { request } from 'undici'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { APIError, ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type FakeChatService, type FakeServerHandle } from 'chat-service-sdk/testing'
import { createFakeHandlers, createMswNetwork } from 'chat-service-sdk/testing/msw'
import { compressBody, negotiateCoding } from '../../src/testing/content-coding.ts'
import { call, ENDPOINTS, fixtureSeed, KEY_A } from './helpers.ts'

const REQUEST_ID = /^req_[0-9a-f]{32}$/

let fake: FakeChatService
let server: FakeServerHandle

beforeAll(async () => {
  // Every body compressed, small ones included: negotiation is checked on the fixtures' small lists.
  fake = createFakeChatService({ seed: fixtureSeed(), compressionMinBytes: 0 })
  server = await fake.listen()
})
afterAll(() => server.close())
beforeEach(() => {
  fake.reset()
})

/** A raw request that sends `accept-encoding` as given (undici's request() adds none) and keeps the body's bytes. */
async function raw(path: string, headers: Record<string, string>, body: unknown = KEY_A, base = server.url) {
  const res = await request(base + path, {
    method: 'GET',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  const bytes = Buffer.from(await res.body.arrayBuffer())
  return { status: res.statusCode, headers: res.headers, bytes }
}

describe('x-request-id (listen mode)', () => {
  it('is on every response, unique, and equal to the recorded request’s requestId', async () => {
    const ids: string[] = []
    const responses = [
      ...(await Promise.all(ENDPOINTS.map((e) => call(server.url, e.method, e.path, { body: { ...KEY_A, ...e.extra } })))),
      await call(server.url, 'GET', '/rest/v1/nope', { body: KEY_A }), // 404
      await call(server.url, 'POST', '/rest/v1/agents', { body: KEY_A }), // 405
      await call(server.url, 'GET', '/rest/v1/agents', { body: { keyId: 'key_a', keySecret: 'wrong' } }), // 401
      await call(server.url, 'GET', '/rest/v1/agents?limit=101', { body: KEY_A }), // 400
      await call(server.url, 'GET', '/rest/v1/agents', { rawBody: '{' }), // 400, malformed JSON
    ]
    for (const res of responses) {
      expect(res.headers['x-request-id'], String(res.status)).toMatch(REQUEST_ID)
      ids.push(res.headers['x-request-id'] as string)
    }
    expect(responses.map((r) => r.status)).toEqual([...ENDPOINTS.map(() => 200), 404, 405, 401, 400, 400])
    expect(new Set(ids).size).toBe(ids.length)
    expect(new Set(fake.requests.map((r) => r.requestId))).toEqual(new Set(ids))
  })

  it('is on synthetic fault responses, 413, and on headers sent before a mid-body drop', async () => {
    fake.failNext(1, { status: 503 })
    fake.failNext(1, { status: 204 })
    fake.failNext(1, { body: 'plain text' })
    const faulted = [
      await call(server.url, 'GET', '/rest/v1/agents', { body: KEY_A }),
      await call(server.url, 'GET', '/rest/v1/agents', { body: KEY_A }),
      await call(server.url, 'GET', '/rest/v1/agents', { body: KEY_A }),
    ]
    expect(faulted.map((r) => r.status)).toEqual([503, 204, 500])
    for (const [i, res] of faulted.entries()) expect(res.headers['x-request-id']).toBe(fake.requests[i]!.requestId)

    const tooLarge = await call(server.url, 'POST', '/rest/v1/auth/token', { rawBody: 'x'.repeat(16 * 1024 * 1024 + 1) })
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.headers['x-request-id']).toMatch(REQUEST_ID)

    fake.failNext(1, { dropConnection: 'mid-body' })
    const res = await request(`${server.url}/rest/v1/agents`, {
      method: 'GET',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(KEY_A),
    })
    expect(res.headers['x-request-id']).toBe(fake.requests.at(-1)!.requestId)
    await expect(res.body.text()).rejects.toThrow()
  })

  it('can be replaced by a fault’s headers, to script a given id', async () => {
    fake.failNext(1, { status: 500, headers: { 'X-Request-Id': 'req_scripted' } })
    const res = await call(server.url, 'GET', '/rest/v1/agents', { body: KEY_A })
    expect(res.headers['x-request-id']).toBe('req_scripted')
  })

  it('reaches the SDK: response.requestId and the requestId of an APIError', async () => {
    const client = new ChatServiceClient({ ...server.clientOptions(), maxRetries: 0, logLevel: 'off' })
    try {
      const { response } = await client.agents.list().withResponse()
      expect(response.requestId).toBe(fake.requests.at(-1)!.requestId)
      fake.failNext(1, { status: 503 })
      const error: unknown = await client.agents.list().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(APIError)
      expect((error as APIError).requestId).toBe(fake.requests.at(-1)!.requestId)
    } finally {
      await client.close()
    }
  })
})

describe('x-request-id (msw mode)', () => {
  let network: ReturnType<typeof createMswNetwork> | undefined
  afterEach(() => {
    network?.disable()
  })

  it('is on every response, the 501s of what msw mode cannot see and injected faults included', async () => {
    const base = 'http://chat.test'
    network = createMswNetwork(createFakeHandlers(fake, base, { companyForGet: 'co_a' }))
    network.enable()
    fake.failNext(1, { status: 429, headers: { 'retry-after': '1' } })
    const responses = [
      await call(base, 'GET', '/rest/v1/agents', { body: KEY_A }), // the fault
      await call(base, 'GET', '/rest/v1/agents', { body: KEY_A }),
      await call(base, 'GET', '/rest/v1/customer-users', { body: { ...KEY_A, name: 'Alice Smith' } }), // 501
      await call(base, 'POST', '/rest/v1/auth/token', { body: { ...KEY_A, userId: 'ext_1' } }),
    ]
    expect(responses.map((r) => r.status)).toEqual([429, 200, 501, 200])
    const ids = responses.map((r) => r.headers['x-request-id'])
    for (const id of ids) expect(id).toMatch(REQUEST_ID)
    expect(ids).toEqual(fake.requests.map((r) => r.requestId))
    // msw mode never compresses.
    for (const res of responses) expect(res.headers['content-encoding']).toBeUndefined()
  })
})

describe('compression (listen mode)', () => {
  it('sends gzip or br as asked, with content-encoding and vary, and the same JSON once decoded', async () => {
    const identity = await raw('/rest/v1/agents', {})
    expect(identity.headers['content-encoding']).toBeUndefined()
    expect(identity.headers['vary']).toBe('accept-encoding') // the answer depends on the header, even when not compressed
    const json = JSON.parse(identity.bytes.toString('utf8')) as unknown

    const gzip = await raw('/rest/v1/agents', { 'accept-encoding': 'gzip' })
    expect(gzip.headers['content-encoding']).toBe('gzip')
    expect(gzip.headers['vary']).toBe('accept-encoding')
    expect(Number(gzip.headers['content-length'])).toBe(gzip.bytes.length)
    expect(JSON.parse(gunzipSync(gzip.bytes).toString('utf8'))).toEqual(json)

    const br = await raw('/rest/v1/agents', { 'accept-encoding': 'br' })
    expect(br.headers['content-encoding']).toBe('br')
    expect(JSON.parse(brotliDecompressSync(br.bytes).toString('utf8'))).toEqual(json)

    // Error bodies too (compressionMinBytes: 0).
    const notFound = await raw('/rest/v1/nope', { 'accept-encoding': 'gzip' })
    expect(notFound.status).toBe(404)
    expect(JSON.parse(gunzipSync(notFound.bytes).toString('utf8'))).toMatchObject({ error: { status: 404 } })
  })

  it('follows q-values and identity, as a real server does', async () => {
    const cases: [string, string | undefined][] = [
      ['gzip, br', 'br'], // equal q: br first
      ['gzip;q=1, br;q=0.5', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['*', 'br'],
      ['*;q=0.5, gzip', 'gzip'],
      ['deflate, zstd', undefined], // nothing the fake has
      ['identity', undefined],
      ['gzip;q=0.5, identity', undefined], // identity preferred
      ['', undefined],
      ['GZIP', 'gzip'],
      ['x-gzip', 'gzip'],
      ['gzip;q=2, br;q=abc', undefined], // malformed elements are ignored
    ]
    for (const [header, expected] of cases) {
      const res = await raw('/rest/v1/agents', { 'accept-encoding': header })
      expect(res.headers['content-encoding'], JSON.stringify(header)).toBe(expected)
      expect(res.status).toBe(200)
    }
  })

  it('decodes in the SDK, which asks for gzip and br: the answer is compressed and the data is the same', async () => {
    const client = new ChatServiceClient({ ...server.clientOptions(), logLevel: 'off' })
    const plain = new ChatServiceClient({ ...server.clientOptions(), compression: false, logLevel: 'off' })
    try {
      const { data, response } = await client.conversations.messages.list('conv_1').withResponse()
      expect(fake.requests.at(-1)!.headers['accept-encoding']).toMatch(/gzip/)
      expect(response.headers['vary']).toBe('accept-encoding')
      // The SDK removes content-encoding once it has decoded the body; what it asked for says what it got.
      expect(negotiateCoding(fake.requests.at(-1)!.headers['accept-encoding'])).toBe('br')
      const { data: same } = await plain.conversations.messages.list('conv_1').withResponse()
      expect(fake.requests.at(-1)!.headers['accept-encoding']).toBeUndefined()
      expect(data.data).toEqual(same.data)
    } finally {
      await client.close()
      await plain.close()
    }
  })

  it('compresses a slow body and a mid-body drop too (half of the compressed bytes go first)', async () => {
    const big = createFakeChatService({ seed: generateDataset({ seed: 2, conversations: 1, messages: 100 }) })
    const bigServer = await big.listen()
    try {
      big.failNext(1, { bodyDelayMs: 30 })
      const res = await request(`${bigServer.url}/rest/v1/conversations/conv_00001/messages?limit=100`, {
        method: 'GET',
        headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' },
        body: JSON.stringify(bigServer.clientOptions()),
      })
      expect(res.headers['content-encoding']).toBe('gzip')
      const body = JSON.parse(gunzipSync(Buffer.from(await res.body.arrayBuffer())).toString('utf8')) as { data: unknown[] }
      expect(body.data).toHaveLength(100)
    } finally {
      await bigServer.close()
    }
  })

  it('leaves a body alone when a fault sets its content-encoding (to send a broken one), and with compression: false', async () => {
    fake.failNext(1, { status: 200, body: Buffer.from('not gzip'), headers: { 'content-encoding': 'gzip' } })
    const broken = await raw('/rest/v1/agents', { 'accept-encoding': 'gzip' })
    expect(broken.bytes.toString()).toBe('not gzip')

    const off = createFakeChatService({ seed: fixtureSeed(), compression: false })
    const offServer = await off.listen()
    try {
      const res = await request(`${offServer.url}/rest/v1/agents`, {
        method: 'GET',
        headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip, br' },
        body: JSON.stringify(KEY_A),
      })
      expect(res.headers['content-encoding']).toBeUndefined()
      expect(res.headers['vary']).toBeUndefined()
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID)
      expect(JSON.parse(await res.body.text())).toMatchObject({ pagination: { total: 3 } })
    } finally {
      await offServer.close()
    }
  })
})

describe('compressing what is worth it (listen mode)', () => {
  const seed = generateDataset({ seed: 3, agents: 30, customerUsers: 5, conversations: 2, messages: 100 })
  const started: FakeServerHandle[] = []
  afterAll(async () => {
    await Promise.all(started.map((s) => s.close()))
  })
  async function serve(options: Parameters<typeof createFakeChatService>[0] = {}, listen: Parameters<FakeChatService['listen']>[0] = {}) {
    const made = createFakeChatService({ seed, ...options })
    const handle = await made.listen(listen)
    started.push(handle)
    return { fake: made, base: handle.url, key: handle.clientOptions() }
  }
  const BOTH = { 'accept-encoding': 'gzip, br' }

  it('by default compresses bodies of 1,024 bytes or more only: a token and an error go as they are, a page of agents in br', async () => {
    const { base, key } = await serve()
    const token = await request(`${base}/rest/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...BOTH },
      body: JSON.stringify({ ...key, userId: 'ext_1' }),
    })
    const tokenBytes = Buffer.from(await token.body.arrayBuffer())
    expect(token.statusCode).toBe(200)
    expect(tokenBytes.length).toBeLessThan(1_024)
    expect(token.headers['content-encoding']).toBeUndefined()
    expect(token.headers['vary']).toBe('accept-encoding') // a bigger body would have been compressed
    expect(JSON.parse(tokenBytes.toString('utf8'))).toHaveProperty('token')

    const notFound = await raw('/rest/v1/nope', BOTH, key, base)
    expect(notFound.status).toBe(404)
    expect(notFound.headers['content-encoding']).toBeUndefined()

    const agents = await raw('/rest/v1/agents?limit=30', BOTH, key, base)
    expect(agents.headers['content-encoding']).toBe('br')
    const json = brotliDecompressSync(agents.bytes)
    expect(json.length).toBeGreaterThanOrEqual(1_024)
    expect(JSON.parse(json.toString('utf8'))).toMatchObject({ pagination: { total: 30 } })
  })

  it('the threshold is the size before compression: 1,023 bytes go as they are, 1,024 are compressed', async () => {
    const { fake: made, base, key } = await serve()
    for (const [size, expected] of [
      [1_023, undefined],
      [1_024, 'gzip'],
    ] as const) {
      made.failNext(1, { status: 200, body: 'x'.repeat(size) })
      const res = await raw('/rest/v1/agents', { 'accept-encoding': 'gzip' }, key, base)
      expect(res.headers['content-encoding'], String(size)).toBe(expected)
    }
  })

  it("compression: 'gzip' or 'br' offers that coding only; 'off' (and false) never compresses; compressionMinBytes moves the threshold", async () => {
    const gzipOnly = await serve({ compression: 'gzip' })
    expect((await raw('/rest/v1/agents?limit=30', BOTH, gzipOnly.key, gzipOnly.base)).headers['content-encoding']).toBe('gzip')
    expect(
      (await raw('/rest/v1/agents?limit=30', { 'accept-encoding': 'br' }, gzipOnly.key, gzipOnly.base)).headers['content-encoding'],
    ).toBeUndefined()

    const brOnly = await serve({ compression: 'br' })
    expect(
      (await raw('/rest/v1/agents?limit=30', { 'accept-encoding': 'gzip;q=1, br;q=0.1' }, brOnly.key, brOnly.base)).headers[
        'content-encoding'
      ],
    ).toBe('br')

    for (const off of ['off', false] as const) {
      const none = await serve({ compression: off })
      const res = await raw('/rest/v1/agents?limit=30', BOTH, none.key, none.base)
      expect(res.headers['content-encoding']).toBeUndefined()
      expect(res.headers['vary']).toBeUndefined()
    }

    const every = await serve({ compressionMinBytes: 0 })
    expect((await raw('/rest/v1/nope', BOTH, every.key, every.base)).headers['content-encoding']).toBe('br')
    const high = await serve({ compressionMinBytes: 1_000_000 })
    expect((await raw('/rest/v1/agents?limit=30', BOTH, high.key, high.base)).headers['content-encoding']).toBeUndefined()
  })

  it('listen() overrides the fake’s compression per server; bad values are a RangeError before anything listens', async () => {
    const shared = createFakeChatService({ seed, compression: 'off' })
    const plain = await shared.listen()
    const gzip = await shared.listen({ compression: 'gzip', compressionMinBytes: 0 })
    started.push(plain, gzip)
    const key = plain.clientOptions()
    expect((await raw('/rest/v1/nope', BOTH, key, plain.url)).headers['content-encoding']).toBeUndefined()
    expect((await raw('/rest/v1/nope', BOTH, key, gzip.url)).headers['content-encoding']).toBe('gzip')
    // Only the threshold given: the coding stays the fake's (off).
    const stillOff = await shared.listen({ compressionMinBytes: 0 })
    started.push(stillOff)
    expect((await raw('/rest/v1/nope', BOTH, key, stillOff.url)).headers['content-encoding']).toBeUndefined()

    expect(() => createFakeChatService({ compression: 'zstd' as never })).toThrow(RangeError)
    expect(() => createFakeChatService({ compressionMinBytes: -1 })).toThrow(/compressionMinBytes must be an integer >= 0/)
    await expect(shared.listen({ compressionMinBytes: 1.5 })).rejects.toThrow(RangeError)
  })
})

describe('negotiateCoding', () => {
  it('refuses nothing: with every coding refused, identity is still sent (no 406)', () => {
    expect(negotiateCoding('identity;q=0')).toBe('identity')
    expect(negotiateCoding('*;q=0')).toBe('identity')
    expect(negotiateCoding('gzip;q=0.001')).toBe('gzip')
    expect(negotiateCoding('gzip;q=0.0001')).toBe('identity') // more than three decimals: malformed
    expect(negotiateCoding(undefined)).toBe('identity')
  })
})

describe('compressBody', () => {
  // It keeps what it compressed lately (a fake sends the same pages again and again): what comes
  // back must still be the body asked for, in the coding asked for, whatever was asked before.
  it('compresses a body again to the same bytes, each body and coding to its own, in a buffer of the caller’s own', () => {
    const decode = (bytes: Buffer, coding: 'br' | 'gzip'): string =>
      (coding === 'br' ? brotliDecompressSync(bytes) : gunzipSync(bytes)).toString('utf8')
    const a = JSON.stringify({ data: Array.from({ length: 200 }, (_, i) => ({ id: `a_${i}`, text: 'hello' })) })
    const b = a.replaceAll('a_', 'b_') // the same length, other bytes
    for (const coding of ['br', 'gzip'] as const) {
      const first = compressBody(Buffer.from(a), coding)
      expect(decode(first, coding)).toBe(a)
      first.fill(0) // what a caller does with its buffer is its own business
      const again = compressBody(Buffer.from(a), coding)
      expect(decode(again, coding)).toBe(a)
      expect(again).toEqual(compressBody(Buffer.from(a), coding))
      expect(decode(compressBody(Buffer.from(b), coding), coding)).toBe(b)
    }
  })
})
