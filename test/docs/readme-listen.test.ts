// The README's "Testing your code" listen-mode example, as written there (plus one assertion): if
// this fails, the README is wrong.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type FakeServerHandle } from 'chat-service-sdk/testing'

const fake = createFakeChatService({ seed: generateDataset({ seed: 1, customerUsers: 20 }) })
let server: FakeServerHandle

beforeAll(async () => {
  server = await fake.listen()
})
afterAll(() => server.close())

it('finds users by external id', async () => {
  const client = new ChatServiceClient(server.clientOptions()) // the server's URL, the first company's first key
  const page = await client.customerUsers.list({ external_id: 'ext_00001' })
  expect(page.data).toHaveLength(1)
  expect(fake.requests.at(-1)?.body).toMatchObject({ external_id: 'ext_00001' })
  fake.failNext(1, { status: 503 }) // scripted faults: status, Retry-After, delays, dropped connections
  await client.agents.list() // retried, succeeds
  expect(fake.requests.slice(-2).map((request) => request.path)).toEqual(['/rest/v1/agents', '/rest/v1/agents'])
  await client.close()
})
