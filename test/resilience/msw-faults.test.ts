// Faults in msw mode reach the SDK as they do in listen mode: a dropped connection (msw's network
// error, which carries no error code) is retried like a reset socket.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { APIConnectionError, ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import { createFakeHandlers, createMswNetwork } from 'chat-service-sdk/testing/msw'

const seed = generateDataset({ seed: 5, agents: 3, customerUsers: 3, conversations: 1, messages: 4 })
const key = seed.companies[0]!.keys[0]!
const fake = createFakeChatService({ seed })
const network = createMswNetwork(createFakeHandlers(fake, 'https://chat.test'))
beforeAll(() => {
  network.enable()
})
afterAll(() => {
  network.disable()
})

const client = (maxRetries: number): ChatServiceClient =>
  new ChatServiceClient({ baseUrl: 'https://chat.test', keyId: key.keyId, keySecret: key.keySecret, maxRetries, logLevel: 'off' })

it('a connection dropped before the headers is retried, then succeeds', async () => {
  fake.clearRequests()
  fake.failNext(1, { dropConnection: 'before-headers' })
  const page = await client(2).agents.list()
  expect(page.data).toHaveLength(3)
  expect(fake.requests).toHaveLength(2)
})

it('with retries off, the same drop is an APIConnectionError after one request', async () => {
  fake.clearRequests()
  fake.failNext(1, { dropConnection: 'before-headers' })
  await expect(client(0).agents.list()).rejects.toBeInstanceOf(APIConnectionError)
  expect(fake.requests).toHaveLength(1)
})
