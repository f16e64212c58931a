// Consumer check "msw" (scripts/consumer/run.sh), ESM half: msw mode of `chat-service-sdk/testing`
// in a project that installed msw@3 and @mswjs/interceptors next to the tarball. The testing
// entry loads msw lazily from the CONSUMER's node_modules (msw is an optional peer), and the SDK's
// undici traffic to http://chat.test reaches the fake's handlers through msw's socket-level
// interceptor: no server is listening anywhere.
import { strict as assert } from 'node:assert'
import { AuthenticationError, ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import { createFakeHandlers, createMswNetwork } from 'chat-service-sdk/testing/msw'

const BASE = 'http://chat.test'
assert.ok(import.meta.resolve('msw').includes('/node_modules/msw/'), 'msw is not installed in this project')

const seed = generateDataset({ seed: 3, agents: 4, customerUsers: 10, conversations: 2, messages: 30 })
const company = seed.companies[0]
const key = company.keys[0]
const fake = createFakeChatService({ seed })
const network = createMswNetwork(createFakeHandlers(fake, BASE))
await network.enable()
const client = new ChatServiceClient({ baseUrl: BASE, keyId: key.keyId, keySecret: key.keySecret, allowInsecureHttp: true, maxRetries: 0 })
try {
  const agents = await client.agents.list({ limit: 100 })
  assert.deepEqual(
    agents.data.map((a) => a.id),
    fake.listAgents(company.id).map((a) => a.id),
  )
  const user = fake.listCustomerUsers(company.id)[0]
  const users = await client.customerUsers.list({ limit: 5 })
  assert.equal(users.pagination.total, 10)
  const issued = await client.auth.issueToken({ userId: user.external_id, expiresIn: '1h' })
  assert.equal(issued.user.id, user.id)
  assert.ok(fake.verifyToken(issued.token).valid)
  const updated = await client.customerUsers.update(user.id, { email: 'msw@example.com' })
  assert.equal(updated.email, 'msw@example.com')
  let messages = 0
  for await (const conversation of client.conversations.list()) {
    for await (const _ of client.conversations.messages.list(conversation.id, { limit: 7 })) messages++
  }
  assert.equal(messages, 30)
  // msw mode as documented: GET bodies are invisible to the handlers, POST/PUT bodies are seen.
  const seen = fake.requests.map((r) => `${r.method} ${r.bodyVisible}`)
  assert.ok(seen.includes('GET false') && seen.includes('POST true') && seen.includes('PUT true'), seen.join(', '))
  // POST credentials are checked in msw mode.
  const wrongKey = new ChatServiceClient({
    baseUrl: BASE,
    keyId: key.keyId,
    keySecret: 'not-the-secret',
    allowInsecureHttp: true,
    maxRetries: 0,
  })
  await assert.rejects(wrongKey.auth.issueToken({ userId: 'u' }), (e) => e instanceof AuthenticationError)
  await wrongKey.close()
} finally {
  await client.close()
  await network.disable()
}
console.log(`msw (esm): ${fake.requests.length} requests served through msw on node ${process.version}`)
