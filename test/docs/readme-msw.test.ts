// The msw-mode example of TESTING.md ("msw mode"; README's "Testing your code" sums it up), as written
// there (plus a client and assertions), and the README's promise about filters: if this fails, the docs are wrong.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ChatServiceClient, InternalServerError } from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import { createFakeHandlers, createMswNetwork } from 'chat-service-sdk/testing/msw'

const fake = createFakeChatService({ seed: generateDataset({ seed: 1 }) })
const network = createMswNetwork(createFakeHandlers(fake, 'https://chat.test')) // unhandled requests fail
beforeAll(() => {
  network.enable()
})
afterAll(() => {
  network.disable()
})

it('talks to the fake through msw', async () => {
  const { keyId, keySecret } = generateDataset({ seed: 1 }).companies[0]!.keys[0]!
  const client = new ChatServiceClient({ baseUrl: 'https://chat.test', keyId, keySecret })
  const agents = await client.agents.list()
  expect(agents.data.length).toBeGreaterThan(0)
  const updated = await client.customerUsers.update('cu_00001', { name: 'Renamed' })
  expect(updated.name).toBe('Renamed')
  expect(fake.requests.at(-1)?.bodyVisible).toBe(true) // PUT bodies are visible
  expect(fake.requests.at(-2)?.bodyVisible).toBe(false) // GET bodies are not, in msw mode
  // "a filtered customerUsers.list() fails with a 501 that says so, never with data that might be wrong"
  await expect(client.customerUsers.list({ external_id: 'ext_00002' })).rejects.toThrow(InternalServerError)
  await client.close()
})
