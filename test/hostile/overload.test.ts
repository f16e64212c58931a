/**
 * Overload does not multiply the load (issue 19). With more calls than sockets, calls wait in the
 * pool's queue. The per-attempt deadline used to count that wait, so a request that waited most of
 * its `timeout` was sent with little time left, timed out after the server had it, and was sent
 * again: 1,000 calls behind 64 sockets (a `timeout` shorter than the queue) cost the server 1,261
 * requests. Now the wait for a connection and the exchange each get `timeout`, the exchange's
 * clock starting when the request is sent, so a request the server received is not abandoned for
 * time spent in the queue; a request that never left the queue is not load at all.
 *
 * Counts, not timings: the server answers after fixed delays far inside `timeout`, and the tests
 * assert how many requests it received (`npm run overload` prints the figure at full scale).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { APITimeoutError, ChatServiceClient, type ClientOptions } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, agent, pagination } from '../helpers/fixtures.ts'
import { rejection, until } from '../helpers/loopback.ts'
import { json, type HostileServer, useProcessGuard, useHostileServer } from './hostile-server.ts'

let server: HostileServer
// Around each test, after this file's own hooks: no uncaught error, unhandled rejection or pollution.
useProcessGuard()
const clients: ChatServiceClient[] = []
const page = (): Record<string, unknown> => ({ data: [agent(1)], pagination: pagination(1, 20, 1) })

useHostileServer((started) => {
  server = started
})
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close()
  await until(() => server.open === 0)
})

function makeClient(options: Partial<ClientOptions>): ChatServiceClient {
  const client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off', ...options })
  clients.push(client)
  return client
}

describe('a client under overload', () => {
  it('100 calls behind 4 sockets, timeout shorter than the queue: the server receives at most 1.05 requests per call', async () => {
    // Each answer takes 50 ms; 100 calls on 4 sockets queue for about 1,250 ms, over the 500 ms
    // timeout (which leaves a request in flight 450 ms of room for a loaded machine's late timers).
    server.respond(async () => {
      await sleep(50)
      return json(200, page())
    })
    const calls = 100
    const client = makeClient({ connections: 4, timeout: 500 }) // maxRetries: the default, 2

    const results = await Promise.allSettled(Array.from({ length: calls }, () => client.agents.list()))

    expect(server.requests.length).toBeLessThanOrEqual(1.05 * calls)
    // A call that failed ran out of attempts in the queue: its requests never reached the server.
    const succeeded = results.filter((result) => result.status === 'fulfilled').length
    for (const result of results) {
      if (result.status === 'rejected') {
        expect(result.reason).toBeInstanceOf(APITimeoutError)
        expect((result.reason as Error).message).toContain('the request was not sent')
      }
    }
    expect(server.requests.length - succeeded).toBeLessThanOrEqual(0.05 * calls)
  })

  it('a request sent after a long wait in the queue gets its whole timeout: sent once, answered', async () => {
    // One socket. The first request is answered after 1,200 ms of a 2,000 ms timeout; the second
    // waits those 1,200 ms in the queue, then takes 1,200 ms: 2,400 ms after it was queued, 1,200 ms
    // after it was sent. Counted from the queue, it timed out after the server had it, and was sent
    // again. (Each answer 800 ms inside its timeout: room for a loaded machine's late timers.)
    server.respond(async () => {
      await sleep(1_200)
      return json(200, page())
    })
    const client = makeClient({ connections: 1, timeout: 2_000 })

    const [first, second] = await Promise.all([client.agents.list(), client.agents.list()])

    expect(first.data).toHaveLength(1)
    expect(second.data).toHaveLength(1)
    expect(server.requests).toHaveLength(2)
  })

  it('a request that times out in the queue is never sent: APITimeoutError says so', async () => {
    let release: () => void = () => undefined
    const released = new Promise<void>((resolve) => (release = resolve))
    server.respond(async () => {
      await released
      return json(200, page())
    })
    const client = makeClient({ connections: 1, timeout: 5_000, maxRetries: 0 })
    const first = client.agents.list()
    await until(() => server.requests.length === 1)

    const error = await rejection(client.agents.list({}, { timeout: 100 }))
    release()
    await first

    expect(error).toBeInstanceOf(APITimeoutError)
    expect((error as APITimeoutError).message).toMatch(/timed out after 100 ms waiting for a connection \(the request was not sent/)
    // The socket freed by the first call skips the abandoned request: nothing else reaches the server.
    await client.agents.list()
    expect(server.requests).toHaveLength(2)
  })

  it('totalTimeout still bounds an attempt that waits for a connection and then for the answer', async () => {
    server.respond(async () => {
      await sleep(300)
      return json(200, page())
    })
    const client = makeClient({ connections: 1, timeout: 10_000 })
    const first = client.agents.list()
    const error = await rejection(client.agents.list({}, { totalTimeout: 450 }))
    await first

    expect(error).toBeInstanceOf(APITimeoutError)
    expect((error as APITimeoutError).message).toContain('totalTimeout (450 ms) ran out')
  })
})
