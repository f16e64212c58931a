// Consumer check "esm" (scripts/consumer/run.sh): a plain ESM user of the packed tarball.
// Imports `chat-service-sdk` and `chat-service-sdk/testing` by name (the package's `import`
// conditions), starts the embedded fake in listen mode, calls each of the six endpoints once and
// asserts the results against the fake's own state. It runs in a project where msw is NOT
// installed: it also proves the testing entry loads without msw and that msw mode says what is
// missing. Exits non-zero (an AssertionError with the reason) on any mismatch.
import { strict as assert } from 'node:assert'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import {
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
} from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import pkg from 'chat-service-sdk/package.json' with { type: 'json' }

// The import conditions picked the ESM build of the installed tarball, not some other copy.
for (const [specifier, file] of [
  ['chat-service-sdk', '/node_modules/chat-service-sdk/dist/index.js'],
  ['chat-service-sdk/testing', '/node_modules/chat-service-sdk/dist/testing/index.js'],
]) {
  const resolved = import.meta.resolve(specifier)
  assert.ok(resolved.endsWith(file), `${specifier} resolved to ${resolved}, expected …${file}`)
}
assert.equal(VERSION, pkg.version, 'VERSION differs from the package.json version')

// msw is an optional peer: absent here, and the testing entry must not need it for listen mode.
await assert.rejects(
  import('msw'),
  { code: 'ERR_MODULE_NOT_FOUND' },
  'msw is installed in this project: the "without msw" check proves nothing',
)

const seed = generateDataset({ seed: 7, agents: 5, customerUsers: 30, conversations: 4, messages: 120 })
const company = seed.companies[0]
const key = company.keys[0]
const fake = createFakeChatService({ seed })
// Without msw, only the msw entry is out of reach, and it says what to install; this one works (below).
await assert.rejects(import('chat-service-sdk/testing/msw'), /Cannot find (module|package) '(msw|@mswjs)/)
await assert.rejects(import('chat-service-sdk/testing/msw'), /optional peer dependencies msw .*: npm install -D msw @mswjs\/interceptors/)

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
  assert.deepEqual(agents.pagination, { page: 1, limit: 100, total: 5, total_pages: 1 })
  const agent = agents.data.find((a) => a.active)
  assert.ok(agent, 'no active agent')

  // Endpoint 2: customer users, by external_id (filter travels in the GET body).
  const someone = fake.listCustomerUsers(company.id)[3]
  const found = await client.customerUsers.list({ external_id: someone.external_id })
  assert.deepEqual(
    found.data.map((u) => u.id),
    [someone.id],
  )
  assert.equal(found.pagination.total, 1)

  // Endpoint 1: token issuance.
  const issued = await client.auth.issueToken({ userId: someone.external_id, agentId: agent.id, expiresIn: '2h' })
  assert.deepEqual(issued.user, { id: someone.id, externalId: someone.external_id, companyId: company.id, agentId: agent.id })
  assert.equal(issued.agent?.id, agent.id)
  const verified = fake.verifyToken(issued.token)
  assert.ok(verified.valid, 'the issued token does not verify')
  assert.equal(verified.claims.exp - verified.claims.iat, 7200)

  // Endpoint 3: update.
  const updated = await client.customerUsers.update(someone.id, { metadata: { consumer: 'esm' } })
  assert.deepEqual(updated.metadata, { consumer: 'esm' })
  assert.deepEqual(fake.getCustomerUser(company.id, someone.id)?.metadata, { consumer: 'esm' })

  // Endpoint 5: conversations, one page and then every one with for await.
  const firstConversations = await client.conversations.list({ limit: 3 })
  assert.equal(firstConversations.data.length, 3)
  assert.ok(firstConversations.hasNextPage())
  const conversationIds = []
  for await (const c of client.conversations.list({ limit: 3 })) conversationIds.push(c.id)
  assert.deepEqual(
    conversationIds,
    fake.listConversations(company.id).map((c) => c.id),
  )

  // Endpoint 6: messages of one conversation, every page.
  const conversation = fake.listConversations(company.id)[0]
  const messagesPage = await client.conversations.messages.list(conversation.id, { limit: 10 })
  assert.ok(messagesPage instanceof MessagePage)
  assert.deepEqual(messagesPage.conversation, { id: conversation.id, title: conversation.title })
  let messages = 0
  for await (const m of client.conversations.messages.list(conversation.id, { limit: 10 }, { prefetch: 2 })) {
    assert.equal(m.conversation_id, conversation.id)
    messages++
  }
  assert.equal(messages, fake.listMessages(company.id, conversation.id).length)
  assert.ok(messages > 10, 'the conversation fits in one page: paging was not exercised')

  // Errors: the public classes, as thrown by the installed build.
  const sent = fake.requests.length
  await assert.rejects(client.agents.list({ limit: 1000 }), (e) => e instanceof RequestValidationError && e instanceof ChatServiceError)
  assert.equal(fake.requests.length, sent, 'a request was sent despite invalid params')
  await assert.rejects(
    client.customerUsers.update('cu_missing', { name: 'x' }),
    (e) => e instanceof NotFoundError && e instanceof APIError && e instanceof ChatServiceError && e instanceof Error && e.status === 404,
  )
  const wrongKey = new ChatServiceClient({ baseUrl: server.url, keyId: key.keyId, keySecret: 'not-the-secret', maxRetries: 0 })
  await assert.rejects(wrongKey.agents.list(), (e) => e instanceof AuthenticationError && e.status === 401)
  await wrongKey.close()

  // The user-agent carries the installed VERSION.
  const agentHeader = fake.requests[0]?.headers['user-agent'] ?? ''
  assert.ok(agentHeader.startsWith(`chat-service-sdk/${VERSION} `), `user-agent is ${agentHeader}`)
} finally {
  await client.close()
  await server.close()
}
// The package's command, as `npx chat-service-fake` runs it (its shebang, the node on PATH): one
// JSON line of client options, a working fake, a clean exit on Ctrl-C (SIGINT).
const bin = spawn('node_modules/.bin/chat-service-fake', ['--json', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] })
const [line] = await once(createInterface({ input: bin.stdout }), 'line')
const fromBin = new ChatServiceClient(JSON.parse(line))
assert.equal((await fromBin.agents.list()).pagination.total, 5, 'chat-service-fake: expected the default dataset (5 agents)')
await fromBin.close()
bin.kill('SIGINT')
const [code, signal] = await once(bin, 'exit')
assert.deepEqual({ code, signal }, { code: 0, signal: null }, 'chat-service-fake did not exit cleanly on SIGINT')

console.log(`esm smoke: 6 endpoints and chat-service-fake ok against ${pkg.name}@${pkg.version} on node ${process.version}`)
