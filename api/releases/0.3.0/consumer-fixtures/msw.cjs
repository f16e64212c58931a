// Consumer check "msw" (scripts/consumer/run.sh), CommonJS half: the same msw mode from the
// .cjs build, which loads the ESM-only msw 3 with require() (Node >= 22.12).
'use strict'
const assert = require('node:assert').strict
const { ChatServiceClient } = require('chat-service-sdk')
const { createFakeChatService, generateDataset } = require('chat-service-sdk/testing')
const { createFakeHandlers, createMswNetwork } = require('chat-service-sdk/testing/msw')

async function main() {
  const BASE = 'http://chat.test'
  assert.ok(require.resolve('msw').includes('/node_modules/msw/'), 'msw is not installed in this project')
  const seed = generateDataset({ seed: 4, agents: 3, customerUsers: 8, conversations: 2, messages: 20 })
  const company = seed.companies[0]
  const key = company.keys[0]
  const fake = createFakeChatService({ seed })
  const network = createMswNetwork(createFakeHandlers(fake, BASE))
  await network.enable()
  const client = new ChatServiceClient({
    baseUrl: BASE,
    keyId: key.keyId,
    keySecret: key.keySecret,
    allowInsecureHttp: true,
    maxRetries: 0,
  })
  try {
    const agents = await client.agents.list()
    assert.equal(agents.data.length, 3)
    const user = fake.listCustomerUsers(company.id)[1]
    const issued = await client.auth.issueToken({ userId: user.external_id })
    assert.equal(issued.user.id, user.id)
    const updated = await client.customerUsers.update(user.id, { metadata: { via: 'msw-cjs' } })
    assert.deepEqual(updated.metadata, { via: 'msw-cjs' })
    const conversations = await client.conversations.list()
    const first = conversations.data[0]
    assert.ok(first)
    const page = await client.conversations.messages.list(first.id)
    assert.equal(page.conversation.id, first.id)
  } finally {
    await client.close()
    await network.disable()
  }
  console.log(`msw (cjs): ${fake.requests.length} requests served through msw on node ${process.version}`)
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
