// Consumer check "cjs" (scripts/consumer/run.sh): a CommonJS user of the packed tarball.
// `require`s `chat-service-sdk` and `chat-service-sdk/testing` (the package's `require`
// conditions, i.e. the .cjs builds), starts the embedded fake in listen mode, calls each of the
// six endpoints once and asserts the results against the fake's own state. msw is NOT installed
// in this project either. Exits non-zero (an AssertionError with the reason) on any mismatch.
'use strict'
const assert = require('node:assert').strict
const sdk = require('chat-service-sdk')
const testing = require('chat-service-sdk/testing')
const pkg = require('chat-service-sdk/package.json')

const {
  APIError,
  AuthenticationError,
  ChatServiceClient,
  ChatServiceError,
  MessagePage,
  NotFoundError,
  Page,
  PagePromise,
  RequestValidationError,
  VERSION,
} = sdk
const { createFakeChatService, generateDataset } = testing

async function main() {
  // The require conditions picked the CommonJS build of the installed tarball.
  for (const [specifier, file] of [
    ['chat-service-sdk', '/node_modules/chat-service-sdk/dist/index.cjs'],
    ['chat-service-sdk/testing', '/node_modules/chat-service-sdk/dist/testing/index.cjs'],
  ]) {
    const resolved = require.resolve(specifier)
    assert.ok(resolved.endsWith(file), `${specifier} resolved to ${resolved}, expected …${file}`)
  }
  // A real CommonJS module object (not an ES module namespace reached through require(esm)).
  assert.notEqual(sdk[Symbol.toStringTag], 'Module', 'require() returned an ES module namespace')
  assert.equal(typeof ChatServiceClient, 'function')
  assert.equal(VERSION, pkg.version, 'VERSION differs from the package.json version')
  assert.throws(() => require.resolve('msw'), { code: 'MODULE_NOT_FOUND' }, 'msw is installed in this project')

  const seed = generateDataset({ seed: 11, agents: 5, customerUsers: 30, conversations: 4, messages: 120 })
  const company = seed.companies[0]
  const key = company.keys[0]
  const fake = createFakeChatService({ seed })
  // Without msw, only the msw entry is out of reach; this one works (below).
  assert.throws(() => require('chat-service-sdk/testing/msw'), /Cannot find (module|package) '(msw|@mswjs)/)
  assert.throws(() => require('chat-service-sdk/testing/msw'), /optional peer dependencies msw .*: npm install -D msw @mswjs\/interceptors/)

  const server = await fake.listen()
  const client = new ChatServiceClient({ baseUrl: server.url, keyId: key.keyId, keySecret: key.keySecret })
  try {
    // Endpoint 4: agents.
    const agentsPromise = client.agents.list({ limit: 100 })
    assert.ok(agentsPromise instanceof PagePromise)
    const agents = await agentsPromise
    assert.ok(agents instanceof Page)
    assert.deepEqual(
      agents.data.map((a) => a.id),
      fake.listAgents(company.id).map((a) => a.id),
    )
    const agent = agents.data.find((a) => a.active)
    assert.ok(agent, 'no active agent')

    // Endpoint 2: customer users, by external_id.
    const someone = fake.listCustomerUsers(company.id)[5]
    const found = await client.customerUsers.list({ external_id: someone.external_id })
    assert.deepEqual(
      found.data.map((u) => u.id),
      [someone.id],
    )

    // Endpoint 1: token issuance.
    const issued = await client.auth.issueToken({ userId: someone.external_id, agentId: agent.id, expiresIn: '1d' })
    assert.deepEqual(issued.user, { id: someone.id, externalId: someone.external_id, companyId: company.id, agentId: agent.id })
    const verified = fake.verifyToken(issued.token)
    assert.ok(verified.valid, 'the issued token does not verify')
    assert.equal(verified.claims.exp - verified.claims.iat, 86400)

    // Endpoint 3: update.
    const updated = await client.customerUsers.update(someone.id, { name: 'CommonJS User' })
    assert.equal(updated.name, 'CommonJS User')
    assert.equal(fake.getCustomerUser(company.id, someone.id)?.name, 'CommonJS User')

    // Endpoint 5: conversations, every one with for await.
    const conversationIds = []
    for await (const c of client.conversations.list({ limit: 3 })) conversationIds.push(c.id)
    assert.deepEqual(
      conversationIds,
      fake.listConversations(company.id).map((c) => c.id),
    )

    // Endpoint 6: messages of one conversation, page by page.
    const conversation = fake.listConversations(company.id)[0]
    let messages = 0
    let pages = 0
    for await (const page of client.conversations.messages.list(conversation.id, { limit: 10 }).pages()) {
      assert.ok(page instanceof MessagePage)
      assert.equal(page.conversation.id, conversation.id)
      messages += page.data.length
      pages++
    }
    assert.equal(messages, fake.listMessages(company.id, conversation.id).length)
    assert.ok(pages > 1, 'the conversation fits in one page: paging was not exercised')

    // Errors: the public classes of the CommonJS build.
    await assert.rejects(
      client.conversations.list({ page: 0 }),
      (e) => e instanceof RequestValidationError && e instanceof ChatServiceError,
    )
    await assert.rejects(
      client.conversations.messages.list('conv_missing'),
      (e) => e instanceof NotFoundError && e instanceof APIError && e.status === 404,
    )
    const wrongKey = new ChatServiceClient({ baseUrl: server.url, keyId: key.keyId, keySecret: 'not-the-secret', maxRetries: 0 })
    await assert.rejects(wrongKey.auth.issueToken({ userId: 'u' }), (e) => e instanceof AuthenticationError && e.status === 401)
    await wrongKey.close()
  } finally {
    await client.close()
    await server.close()
  }
  console.log(`cjs smoke: 6 endpoints ok against ${pkg.name}@${pkg.version} on node ${process.version}`)
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
