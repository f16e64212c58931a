/**
 * An unsolicited `100 Continue` (issue 19). HTTP lets a server send informational (1xx) responses
 * before the real one, and a client must read past them, but undici 8 refuses a `100 Continue` it
 * did not ask for: both of its HTTP/1.1 parsers destroy the socket with `SocketError: bad response`
 * on status 100, with no option to accept it (other 1xx, such as `103 Early Hints`, are read past).
 * The SDK never sends `Expect: 100-continue`, so such a server answers every request the same way:
 * the call fails at once with an APIConnectionError (`retryable: false`) that names the cause and
 * says the request may have been processed; it is not retried (that would only repeat the request
 * to the service and fail again).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { APIConnectionError, ChatServiceClient } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, agent, pagination, updatedUser } from '../helpers/fixtures.ts'
import { rejection, until } from '../helpers/loopback.ts'
import { json, type HostileServer, useProcessGuard, useHostileServer } from './hostile-server.ts'

let server: HostileServer
let client: ChatServiceClient
// Around each test, after this file's own hooks: no uncaught error, unhandled rejection or pollution.
useProcessGuard()

const agentsPage = (): Record<string, unknown> => ({ data: [agent(1)], pagination: pagination(1, 20, 1) })

useHostileServer((started) => {
  server = started
})
beforeEach(() => {
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET }) // default retries
})
afterEach(async () => {
  await client.close()
  await until(() => server.open === 0)
})

describe('an unsolicited 100 Continue before the answer', () => {
  it.each([
    ['GET agents.list', () => client.agents.list(), agentsPage()],
    ['PUT customerUsers.update', () => client.customerUsers.update('cu-1', { name: 'n' }), updatedUser('cu-1')],
    ['POST auth.issueToken', () => client.auth.issueToken({ userId: 'u-1' }), { token: 't', user: {} }],
  ] as const)('%s: APIConnectionError naming it, not retryable, sent once', async (_call, call, body) => {
    server.respond(() => ({ chunks: ['HTTP/1.1 100 Continue\r\n\r\n', json(200, body)] }))

    const error = await rejection(call())

    expect(error).toBeInstanceOf(APIConnectionError)
    const connectionError = error as APIConnectionError
    expect(connectionError.retryable).toBe(false)
    expect(connectionError.message).toContain('100 Continue')
    expect(connectionError.message).toContain('not retried')
    expect(connectionError.message).not.toContain(KEY_SECRET)
    expect(server.requests).toHaveLength(1)
  })

  it('the same 100 Continue with headers, and two of them: the same error', async () => {
    server.respond(() => ({ chunks: ['HTTP/1.1 100 Continue\r\nx-a: 1\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n', json(200, agentsPage())] }))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(APIConnectionError)
    expect((error as APIConnectionError).message).toContain('100 Continue')
    expect(server.requests).toHaveLength(1)
  })

  it('the client goes on: the next call on a well-behaved answer succeeds', async () => {
    server.respond(() => ({ chunks: ['HTTP/1.1 100 Continue\r\n\r\n', json(200, agentsPage())] }))
    await rejection(client.agents.list())
    server.respond(() => json(200, agentsPage()))
    expect((await client.agents.list()).data).toHaveLength(1)
  })
})

describe('other informational responses are read past', () => {
  it.each(['HTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\n\r\n', 'HTTP/1.1 102 Processing\r\n\r\n'])(
    '%j before a 200: the 200 is the answer',
    async (informational) => {
      server.respond(() => ({ chunks: [informational, json(200, agentsPage())] }))
      const page = await client.agents.list()
      expect(page.data).toHaveLength(1)
      expect(page.response.status).toBe(200)
      expect(server.requests).toHaveLength(1)
    },
  )
})
