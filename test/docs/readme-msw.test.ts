// The README's "Testing your code" msw-mode example, as written there (plus assertions).
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import { createFakeHandlers, createMswNetwork } from 'chat-service-sdk/testing/msw'

const seed = generateDataset({ seed: 1 })
const fake = createFakeChatService({ seed })
const network = createMswNetwork(createFakeHandlers(fake, 'https://chat.test')) // unhandled requests fail
beforeAll(() => { network.enable(); })
afterAll(() => { network.disable(); })

it('talks to the fake through msw', async () => {
  const { keyId, keySecret } = seed.companies[0]!.keys[0]!
  const client = new ChatServiceClient({ baseUrl: 'https://chat.test', keyId, keySecret })
  const agents = await client.agents.list()
  expect(agents.data.length).toBeGreaterThan(0)
  const updated = await client.customerUsers.update('cu_00001', { name: 'Renamed' })
  expect(updated.name).toBe('Renamed')
  expect(fake.requests.at(-1)?.bodyVisible).toBe(true) // PUT bodies are visible
  expect(fake.requests.at(-2)?.bodyVisible).toBe(false) // GET bodies are not, in msw mode
  await client.close()
})
