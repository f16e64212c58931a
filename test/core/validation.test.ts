/** Invalid parameters are refused before a byte is sent: RequestValidationError listing every issue. */
import { http, HttpResponse } from 'msw'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, RequestValidationError, type ValidationIssue } from 'chat-service-sdk'
import { BASE, KEY_ID, KEY_SECRET, emptyListFor, tokenResponse, updatedUser } from '../helpers/fixtures.ts'
import { setupMsw } from '../helpers/msw.ts'

const msw = setupMsw()
let client: ChatServiceClient

beforeEach(() => {
  client = new ChatServiceClient({ baseUrl: BASE, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
  // A handler for everything, so that a request that should not have been sent is counted, not just refused.
  msw.use(
    http.all(`${BASE}/*`, ({ request }) => {
      if (request.method === 'POST') return HttpResponse.json(tokenResponse())
      if (request.method === 'PUT') return HttpResponse.json(updatedUser())
      return HttpResponse.json(emptyListFor(new URL(request.url).pathname))
    }),
  )
})
afterEach(async () => {
  await client.close()
})

/** Runs `call`, expects a RequestValidationError, and that nothing reached the network. */
async function refusal(call: () => PromiseLike<unknown>): Promise<readonly ValidationIssue[]> {
  let error: unknown
  try {
    await call()
  } catch (e) {
    error = e
  }
  expect(error).toBeInstanceOf(RequestValidationError)
  // Let pending I/O run, so that a request wrongly started would reach msw before we count.
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
  expect(msw.count()).toBe(0)
  const issues = (error as RequestValidationError).issues
  expect(issues.length).toBeGreaterThan(0)
  for (const issue of issues) {
    expect(Array.isArray(issue.path)).toBe(true)
    expect(typeof issue.message).toBe('string')
    expect(issue.message.length).toBeGreaterThan(0)
  }
  return issues
}

const paths = (issues: readonly ValidationIssue[]): (readonly (string | number)[])[] => issues.map((issue) => issue.path)

const listCalls = {
  'agents.list': (params: unknown) => client.agents.list(params as never),
  'conversations.list': (params: unknown) => client.conversations.list(params as never),
  'customerUsers.list': (params: unknown) => client.customerUsers.list(params as never),
  'conversations.messages.list': (params: unknown) => client.conversations.messages.list('conv-1', params as never),
}

describe('page and limit', () => {
  const bad: [string, Record<string, unknown>, string][] = [
    ['page 0', { page: 0 }, 'page'],
    ['page -1', { page: -1 }, 'page'],
    ['page 1.5', { page: 1.5 }, 'page'],
    ['page NaN', { page: Number.NaN }, 'page'],
    ['page "2"', { page: '2' }, 'page'],
    ['limit 0', { limit: 0 }, 'limit'],
    ['limit 101', { limit: 101 }, 'limit'],
    ['limit 2.5', { limit: 2.5 }, 'limit'],
    ['limit Infinity', { limit: Number.POSITIVE_INFINITY }, 'limit'],
  ]
  for (const [name, call] of Object.entries(listCalls)) {
    it.each(bad)(`${name}: %s`, async (_label, params, field) => {
      const issues = await refusal(() => call(params))
      expect(paths(issues)).toContainEqual([field])
    })

    it(`${name}: every issue is listed (page 0 and limit 101 together)`, async () => {
      const issues = await refusal(() => call({ page: 0, limit: 101 }))
      expect(paths(issues)).toContainEqual(['page'])
      expect(paths(issues)).toContainEqual(['limit'])
    })

    it(`${name}: an unknown param key`, async () => {
      const issues = await refusal(() => call({ limit: 10, pageSize: 10 }))
      expect(issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('\n')).toContain('pageSize')
    })

    it(`${name}: iterating a refused list rejects too, still without a request`, async () => {
      await refusal(async () => {
        for await (const _ of call({ page: 0 }) as AsyncIterable<unknown>) {
          // nothing
        }
      })
    })
  }

  it('limit 100 and limit 1 are accepted', async () => {
    await client.agents.list({ limit: 100 })
    await client.agents.list({ limit: 1 })
    expect((await msw.requests()).map((request) => request.url.searchParams.get('limit'))).toEqual(['100', '1'])
  })
})

describe('customer-user filters', () => {
  it.each([
    [{ external_id: 42 }, 'external_id'],
    [{ name: ['a'] }, 'name'],
    [{ email: null }, 'email'],
    [{ externalId: 'x' }, null],
  ])('%j is refused', async (params, field) => {
    const issues = await refusal(() => client.customerUsers.list(params as never))
    if (field !== null) expect(paths(issues)).toContainEqual([field])
  })
})

describe('ids', () => {
  it('update with an empty id', async () => {
    await refusal(() => client.customerUsers.update('', { name: 'n' }))
  })

  it('update with a non-string id', async () => {
    await refusal(() => client.customerUsers.update(42 as never, { name: 'n' }))
  })

  it('messages.list with an empty conversation id', async () => {
    await refusal(() => client.conversations.messages.list(''))
  })

  it('messages.list with an undefined conversation id', async () => {
    await refusal(() => client.conversations.messages.list(undefined as never))
  })

  it('issueToken with an empty userId or agentId', async () => {
    expect(paths(await refusal(() => client.auth.issueToken({ userId: '' })))).toContainEqual(['userId'])
    expect(paths(await refusal(() => client.auth.issueToken({ userId: 'u', agentId: '' })))).toContainEqual(['agentId'])
  })

  it('issueToken with every field wrong lists every issue', async () => {
    const issues = await refusal(() => client.auth.issueToken({ userId: 1, agentId: '', expiresIn: '1m', extra: true } as never))
    expect(paths(issues)).toContainEqual(['userId'])
    expect(paths(issues)).toContainEqual(['agentId'])
    expect(paths(issues)).toContainEqual(['expiresIn'])
    expect(issues.length).toBeGreaterThanOrEqual(4)
  })

  it('update with an empty id and no fields lists both problems', async () => {
    const issues = await refusal(() => client.customerUsers.update('', {})) // {} type-checks (issue 18): refused at run time
    expect(issues.length).toBeGreaterThanOrEqual(2)
  })

  it('messages.list with an empty id and page 0 lists both problems', async () => {
    const issues = await refusal(() => client.conversations.messages.list('', { page: 0 }))
    expect(paths(issues)).toContainEqual(['page'])
    expect(issues.length).toBeGreaterThanOrEqual(2)
  })
})

describe('update fields', () => {
  it('no fields at all', async () => {
    await refusal(() => client.customerUsers.update('cu-1', {})) // type-checks since issue 18 (computed updates); refused here
  })

  it('an unknown field', async () => {
    const issues = await refusal(() => client.customerUsers.update('cu-1', { name: 'n', external_id: 'x' } as never))
    expect(issues.map((issue) => issue.message).join('\n')).toContain('external_id')
  })

  it.each([
    [{ name: 5 }, 'name'],
    [{ email: false }, 'email'],
    [{ name: '' }, 'name'],
    [{ email: '' }, 'email'],
    [{ metadata: 'x' }, 'metadata'],
    [{ metadata: [1, 2] }, 'metadata'],
    [{ metadata: null }, 'metadata'],
  ])('%j is refused at its path', async (params, field) => {
    const issues = await refusal(() => client.customerUsers.update('cu-1', params as never))
    expect(paths(issues).some((path) => path[0] === field)).toBe(true)
  })

  class Money {
    readonly amount = 1
  }

  it.each([
    ['a Date', { when: new Date(0) }, ['metadata', 'when']],
    ['a function', { fn: () => 1 }, ['metadata', 'fn']],
    ['NaN', { n: Number.NaN }, ['metadata', 'n']],
    ['Infinity', { n: Number.POSITIVE_INFINITY }, ['metadata', 'n']],
    ['a class instance', { price: new Money() }, ['metadata', 'price']],
    ['a Map', { m: new Map([['a', 1]]) }, ['metadata', 'm']],
    ['undefined', { u: undefined }, ['metadata', 'u']],
    ['a bigint', { b: 10n }, ['metadata', 'b']],
    ['a nested Date', { a: { b: [1, { c: new Date(0) }] } }, ['metadata', 'a', 'b', 1, 'c']],
  ])('metadata holding %s is refused at its path', async (_label, metadata, path) => {
    const issues = await refusal(() => client.customerUsers.update('cu-1', { metadata }))
    expect(paths(issues)).toContainEqual(path)
  })

  it('metadata with a cycle is refused at its path', async () => {
    const metadata: Record<string, unknown> = { a: 1 }
    metadata['self'] = metadata
    const issues = await refusal(() => client.customerUsers.update('cu-1', { metadata }))
    expect(paths(issues)).toContainEqual(['metadata', 'self'])
  })

  it('a class instance as the metadata itself is refused', async () => {
    await refusal(() => client.customerUsers.update('cu-1', { metadata: new Money() as unknown as Record<string, unknown> }))
  })

  it('metadata with several problems lists every one with its path', async () => {
    const metadata: Record<string, unknown> = { when: new Date(0), fn: () => 1, n: Number.NaN, price: new Money(), ok: 'fine' }
    metadata['self'] = metadata
    const issues = await refusal(() => client.customerUsers.update('cu-1', { name: 'n', metadata }))
    expect(paths(issues)).toEqual(
      expect.arrayContaining([
        ['metadata', 'when'],
        ['metadata', 'fn'],
        ['metadata', 'n'],
        ['metadata', 'price'],
        ['metadata', 'self'],
      ]),
    )
    expect(paths(issues)).not.toContainEqual(['metadata', 'ok'])
  })

  it('plain nested metadata (and a null-prototype object) is accepted and sent as is', async () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { k: 'v' })
    const metadata = { version: 2, tags: ['a', 'b'], nested: { deep: { ok: true, n: 1.5, none: null } }, bare }
    await client.customerUsers.update('cu-1', { metadata })
    const [request] = await msw.requests()
    expect(JSON.parse(request?.body ?? '')).toEqual({ keyId: KEY_ID, keySecret: KEY_SECRET, metadata: { ...metadata, bare: { k: 'v' } } })
  })
})

describe('per-call options', () => {
  it.each([
    [{ timeout: 0 }, 'timeout'],
    [{ timeout: -5 }, 'timeout'],
    [{ maxRetries: -1 }, 'maxRetries'],
    [{ maxRetries: 1.5 }, 'maxRetries'],
    [{ signal: 'abort' }, 'signal'],
    [{ headers: { 'content-type': 'text/plain' } }, 'headers'],
    [{ headers: { 'x-a': 'line\r\nbreak' } }, 'headers'],
    [{ retries: 3 }, null],
  ])('options %j are refused', async (options, field) => {
    // Option issues are reported under `options`, next to any params issues of the same call.
    const issues = await refusal(() => client.agents.list({}, options as never))
    if (field !== null) expect(paths(issues).some((path) => path[0] === 'options' && path[1] === field)).toBe(true)
    const issues2 = await refusal(() => client.auth.issueToken({ userId: 'u' }, options as never))
    if (field !== null) expect(paths(issues2).some((path) => path[0] === 'options' && path[1] === field)).toBe(true)
  })

  it('prefetch out of range is refused', async () => {
    await refusal(() => client.agents.list({}, { prefetch: -1 }))
    await refusal(() => client.agents.list({}, { prefetch: 1.5 }))
  })
})
