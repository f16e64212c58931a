// msw mode and listen mode in one test file: the kit's msw network intercepts every request of
// the process, and lets the ones to the fake's own listening servers through (GET bodies intact).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { http, HttpResponse } from 'msw'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type FakeServerHandle } from 'chat-service-sdk/testing'
import { createFakeHandlers, createMswNetwork } from 'chat-service-sdk/testing/msw'

const seed = generateDataset({ seed: 3, agents: 2, customerUsers: 12, conversations: 2, messages: 10 })
const fake = createFakeChatService({ seed })
const network = createMswNetwork(createFakeHandlers(fake, 'https://chat.test'))
let server: FakeServerHandle
let viaListen: ChatServiceClient
let viaMsw: ChatServiceClient

beforeAll(async () => {
  network.enable()
  server = await fake.listen()
  viaListen = new ChatServiceClient({ ...server.clientOptions(), logLevel: 'off' })
  viaMsw = new ChatServiceClient({ ...server.clientOptions(), baseUrl: 'https://chat.test', logLevel: 'off', maxRetries: 0 })
})
afterAll(async () => {
  await viaListen.close()
  await viaMsw.close()
  await server.close()
  network.disable()
})

/** Runs `fn` with msw's console error (printed for unhandled requests) captured. */
async function capturingMswErrors(fn: () => Promise<void>): Promise<string> {
  const log = vi.spyOn(console, 'error').mockImplementation(() => {})
  try {
    await fn()
    return log.mock.calls.flat().join(' ')
  } finally {
    log.mockRestore()
  }
}

describe('msw mode and listen mode in one file', () => {
  it('serves both clients from the same state; the listen-mode GET body reaches the server', async () => {
    const target = fake.listCustomerUsers('comp_1')[5]!
    const found = await viaListen.customerUsers.list({ external_id: target.external_id })
    expect(found.data.map((user) => user.id)).toEqual([target.id])
    expect(fake.requests.at(-1)).toMatchObject({ bodyVisible: true, body: { external_id: target.external_id } })

    const renamed = await viaMsw.customerUsers.update(target.id, { name: 'Renamed in msw mode' })
    expect(renamed.name).toBe('Renamed in msw mode')
    const again = await viaListen.customerUsers.list({ external_id: target.external_id })
    expect(again.data[0]?.name).toBe('Renamed in msw mode')
  })

  it('lets through only the fake’s own servers: another loopback server is still an unhandled request', async () => {
    const other = createServer((_req, res) => res.end('not the fake'))
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
    const { port } = other.address() as AddressInfo
    try {
      const errors = await capturingMswErrors(async () => {
        await expect(request(`http://127.0.0.1:${port}/`)).rejects.toThrow()
      })
      expect(errors).toContain(`127.0.0.1:${port}`)
    } finally {
      await new Promise((resolve) => other.close(resolve))
    }
  })

  it('lets a server through only while it listens', async () => {
    const second = await fake.listen()
    const client = new ChatServiceClient({ ...second.clientOptions(), logLevel: 'off', maxRetries: 0 })
    try {
      expect((await client.agents.list()).data).toHaveLength(2)
    } finally {
      await second.close()
    }
    const errors = await capturingMswErrors(async () => {
      await expect(client.agents.list()).rejects.toThrow()
    })
    expect(errors).toContain('without a matching request handler')
    await client.close()
  })

  it('keeps letting the fake’s servers through after resetHandlers(...); the user’s own handlers come first', async () => {
    network.resetHandlers(...createFakeHandlers(fake, 'https://other.test'))
    try {
      expect((await viaListen.agents.list()).data).toHaveLength(2)
      network.use(
        http.get(`${server.url}/rest/v1/agents`, () =>
          HttpResponse.json({ data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } }),
        ),
      )
      expect((await viaListen.agents.list()).data).toHaveLength(0)
    } finally {
      network.resetHandlers(...createFakeHandlers(fake, 'https://chat.test'))
    }
    expect((await viaMsw.agents.list()).data).toHaveLength(2)
  })
})
