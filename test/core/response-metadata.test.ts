/**
 * Response metadata (0.2): single-result methods return an APIPromise (await → the result,
 * `.withResponse()` → `{ data, response }`), list methods' PagePromise has `.withResponse()` for
 * the first page, every Page keeps the response it came from, and errors carry the request id.
 * Checked against a loopback node:http server that answers with request ids of its own.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  APIPromise,
  ChatServiceClient,
  InternalServerError,
  NotFoundError,
  Page,
  PagePromise,
  ResponseValidationError,
  type APIResponse,
} from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, agent, tokenResponse, updatedUser } from '../helpers/fixtures.ts'
import { pageOf, rejection, type LoopbackServer, useLoopback } from '../helpers/loopback.ts'

let server: LoopbackServer
let client: ChatServiceClient

useLoopback((started) => {
  server = started
})
beforeEach(() => {
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0, logLevel: 'off' })
})
afterEach(async () => {
  await client.close()
})

/** Agents split into pages of 2, 5 agents in all; each response has request id `req_page_<n>`. */
function pagedAgents(): void {
  server.respond((request) => {
    const page = pageOf(request)
    const all = [1, 2, 3, 4, 5].map(agent)
    return {
      headers: { 'X-Request-Id': `req_page_${page}`, 'X-Page-Served': String(page) },
      body: { data: all.slice((page - 1) * 2, page * 2), pagination: { page, limit: 2, total: 5, total_pages: 3 } },
    }
  })
}

function expectLowerCaseNames(response: APIResponse): void {
  for (const name of Object.keys(response.headers)) expect(name).toBe(name.toLowerCase())
}

describe('APIPromise from single-result methods', () => {
  it('auth.issueToken: await gives the result; withResponse() gives { data, response } with status, lower-case headers and requestId', async () => {
    server.respond(() => ({ headers: { 'X-Request-Id': 'req_123', 'X-Custom-Thing': 'yes' }, body: tokenResponse() }))
    const promise = client.auth.issueToken({ userId: 'ext-1', agentId: 'agent-2' })
    expect(promise).toBeInstanceOf(APIPromise)
    expect(Object.prototype.toString.call(promise)).toBe('[object APIPromise]')
    const { data, response } = await promise.withResponse()
    expect(data).toStrictEqual(tokenResponse())
    expect(response.status).toBe(200)
    expect(response.requestId).toBe('req_123')
    expect(response.headers['x-request-id']).toBe('req_123')
    expect(response.headers['x-custom-thing']).toBe('yes')
    expect(response.headers['content-type']).toBe('application/json')
    expectLowerCaseNames(response)
    // Awaiting the same promise gives the same result without a second request.
    expect(await promise).toStrictEqual(tokenResponse())
    expect(server.arrivals).toHaveLength(1)
  })

  it('customerUsers.update: await gives the updated user; withResponse() gives its response', async () => {
    server.respond(() => ({ status: 200, headers: { 'x-request-id': 'req_upd' }, body: updatedUser('cu-7') }))
    const user = await client.customerUsers.update('cu-7', { name: 'New Name' })
    expect(user).toStrictEqual(updatedUser('cu-7'))
    const { data, response } = await client.customerUsers.update('cu-7', { name: 'New Name' }).withResponse()
    expect(data).toStrictEqual(updatedUser('cu-7'))
    expect(response).toMatchObject({ status: 200, requestId: 'req_upd' })
    expectLowerCaseNames(response)
    expect(server.arrivals).toHaveLength(2)
  })

  it('a 2xx status other than 200 is reported as it came (customerUsers.update answered 202)', async () => {
    server.respond(() => ({ status: 202, body: updatedUser() }))
    const { response } = await client.customerUsers.update('cu-1', { name: 'x' }).withResponse()
    expect(response.status).toBe(202)
  })

  it('requestId is undefined when the service sends no x-request-id', async () => {
    server.respond(() => ({ body: tokenResponse() }))
    const { response } = await client.auth.issueToken({ userId: 'ext-1' }).withResponse()
    expect(response.requestId).toBeUndefined()
    expect('x-request-id' in response.headers).toBe(false)
  })

  it('then, catch and finally behave as on a promise', async () => {
    server.respond(() => ({ body: updatedUser() }))
    const order: string[] = []
    const name = await client.customerUsers
      .update('cu-1', { name: 'n' })
      .finally(() => order.push('finally'))
      .then((user) => user.name)
    expect(name).toBe('New Name')
    expect(order).toEqual(['finally'])
    server.respond(() => ({ status: 404, body: { error: 'no such user' } }))
    const caught = await client.customerUsers.update('cu-404', { name: 'n' }).catch((error: unknown) => error)
    expect(caught).toBeInstanceOf(NotFoundError)
  })

  it('the request starts at once, before anyone awaits the APIPromise', async () => {
    server.respond(() => ({ body: tokenResponse() }))
    const promise = client.auth.issueToken({ userId: 'ext-1' })
    for (let i = 0; i < 200 && server.arrivals.length === 0; i++) await sleep(5)
    expect(server.arrivals).toHaveLength(1)
    await promise
  })

  it('a failure reaches await and withResponse() alike', async () => {
    server.respond(() => ({ status: 404, headers: { 'x-request-id': 'req_404' }, body: { error: 'no such user' } }))
    const promise = client.customerUsers.update('cu-x', { name: 'n' })
    const viaAwait = await rejection(promise)
    const viaWithResponse = await rejection(promise.withResponse())
    expect(viaAwait).toBeInstanceOf(NotFoundError)
    expect(viaWithResponse).toBe(viaAwait)
    expect(server.arrivals).toHaveLength(1)
  })
})

describe('pages and their responses', () => {
  it('PagePromise.withResponse() gives { data: firstPage, response }, and the page keeps the same response', async () => {
    pagedAgents()
    const promise = client.agents.list({ limit: 2 })
    expect(promise).toBeInstanceOf(PagePromise)
    const { data: page, response } = await promise.withResponse()
    expect(page).toBeInstanceOf(Page)
    expect(page.data).toStrictEqual([agent(1), agent(2)])
    expect(response).toMatchObject({ status: 200, requestId: 'req_page_1' })
    expect(response.headers['x-page-served']).toBe('1')
    expectLowerCaseNames(response)
    expect(page.response).toStrictEqual(response)
    expect(server.arrivals).toHaveLength(1)
  })

  it('every page from iteration has the response it came from', async () => {
    pagedAgents()
    const seen: APIResponse[] = []
    for await (const page of client.agents.list({ limit: 2 }).pages()) seen.push(page.response)
    expect(seen.map((response) => response.requestId)).toEqual(['req_page_1', 'req_page_2', 'req_page_3'])
    expect(seen.map((response) => response.headers['x-page-served'])).toEqual(['1', '2', '3'])
    expect(seen.every((response) => response.status === 200)).toBe(true)
  })

  it('getNextPage() resolves with a page holding its own response', async () => {
    pagedAgents()
    const first = await client.agents.list({ limit: 2 })
    const second = await first.getNextPage()
    const third = await second.getNextPage()
    expect(first.response.requestId).toBe('req_page_1')
    expect(second.response.requestId).toBe('req_page_2')
    expect(third.response.requestId).toBe('req_page_3')
    expect(third.data).toStrictEqual([agent(5)])
  })

  it('conversations.messages.list: message pages keep their response too', async () => {
    server.respond((request) => {
      const page = pageOf(request)
      return {
        headers: { 'x-request-id': `req_msg_${page}` },
        body: {
          data: [{ id: `m${page}`, content: 'hi', role: 'user', conversation_id: 'conv-1', created_at: '2024-01-01T00:00:00Z' }],
          pagination: { page, limit: 1, total: 2, total_pages: 2 },
          conversation: { id: 'conv-1', title: 'T' },
        },
      }
    })
    const { data: first, response } = await client.conversations.messages.list('conv-1', { limit: 1 }).withResponse()
    expect(response.requestId).toBe('req_msg_1')
    expect(first.conversation).toStrictEqual({ id: 'conv-1', title: 'T' })
    const second = await first.getNextPage()
    expect(second.response.requestId).toBe('req_msg_2')
  })
})

describe('request ids on errors', () => {
  it('an APIError carries requestId and shows it in its message', async () => {
    server.respond(() => ({ status: 404, headers: { 'x-request-id': 'req_123' }, body: { error: 'no such user' } }))
    const error = await rejection(client.customerUsers.update('cu-x', { name: 'n' }))
    expect(error).toBeInstanceOf(NotFoundError)
    expect((error as NotFoundError).requestId).toBe('req_123')
    expect((error as NotFoundError).message).toContain('(request id req_123)')
  })

  it('a failing list call carries requestId too (a 500)', async () => {
    server.respond(() => ({ status: 500, headers: { 'x-request-id': 'req_boom' }, body: 'boom' }))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(InternalServerError)
    expect((error as InternalServerError).requestId).toBe('req_boom')
    expect((error as InternalServerError).message).toContain('(request id req_boom)')
  })

  it('an APIError without x-request-id has requestId undefined and no request-id note', async () => {
    server.respond(() => ({ status: 404, body: { error: 'no such user' } }))
    const error = await rejection(client.customerUsers.update('cu-x', { name: 'n' }))
    expect((error as NotFoundError).requestId).toBeUndefined()
    expect((error as NotFoundError).message).not.toContain('request id')
  })

  it('a ResponseValidationError carries requestId and names it in its message', async () => {
    server.respond(() => ({ headers: { 'x-request-id': 'req_bad' }, body: { token: 42 } }))
    const error = await rejection(client.auth.issueToken({ userId: 'ext-1' }))
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).requestId).toBe('req_bad')
    expect((error as ResponseValidationError).message).toContain('req_bad')
  })
})
