// Fixed in 0.2 (found by the listAll test suite): a resumed cursor whose conversation moved up within its page, and the in-flight bound at concurrency 1.
import { afterEach, expect, it } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import { modelOf, nestedOrder, startCompanyServer, type CompanyServer } from '../helpers/company-server.ts'

let server: CompanyServer | undefined
let client: ChatServiceClient | undefined
afterEach(async () => {
  await client?.close()
  await server?.close()
})

it('resuming after the cursor conversation moved up within its page of conversations skips nothing', async () => {
  server = await startCompanyServer(modelOf(Array.from({ length: 150 }, () => 2)))
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: 'key', keySecret: 'secret-long-enough-1234' })
  const all = client.conversations.messages.listAll({ limit: 5 })
  const first: string[] = []
  for await (const m of all) {
    first.push(m.id)
    if (first.length === 11) break // c005-m0000, mid conversation c005
  }
  const cursor = all.cursor()
  server.conversations.splice(2, 1) // c002 deleted: c005 moves from index 5 to 4, still on page 1 (documented: followed)
  const resumed = client.conversations.messages.listAll({ cursor })
  const rest: string[] = []
  for await (const m of resumed) rest.push(m.id)
  const expected = nestedOrder(server.conversations)
  // Expected: c005-m0001, then c006 ... c150. Actual: c005-m0001, then c101-m0000 ...: c006..c100 (190 messages) skipped, no error.
  expect(rest).toEqual(expected.slice(expected.indexOf('c005-m0000') + 1))
})

it('concurrency 1 with more than 100 conversations keeps one request in flight (conversation pages included)', async () => {
  server = await startCompanyServer(modelOf(Array.from({ length: 150 }, (_, i) => (i * 13) % 35)))
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: 'key', keySecret: 'secret-long-enough-1234' })
  server.decide((request) => ({ delayMs: request.kind === 'conversations' ? 40 : 3 }))
  for await (const _ of client.conversations.messages.listAll({ limit: 10, concurrency: 1 })) {
    // drain
  }
  console.log(
    server.peakInFlight,
    server.requests.slice(0, 6).map((r) => `${r.kind} ${r.conversationId} p${r.page}`),
  )
  expect(server.peakInFlight).toBe(1) // actual: 2
})
