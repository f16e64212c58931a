// The fake service's rules, exercised through the SDK (issue 3): what a user of the SDK sees when
// testing against the fake in listen mode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AuthenticationError, BadRequestError, ChatServiceClient, NotFoundError } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type FakeServerHandle } from 'chat-service-sdk/testing'

const seed = generateDataset({ seed: 11, agents: 4, customerUsers: 45, conversations: 6, messages: 130, companies: 2 })
const [home, other] = seed.companies
if (home === undefined || other === undefined) throw new Error('expected two companies')
const homeKey = home.keys[0]!
const fake = createFakeChatService({ seed, filterMatch: 'partial' })
let server: FakeServerHandle
let client: ChatServiceClient

beforeAll(async () => {
  server = await fake.listen()
  client = new ChatServiceClient({ baseUrl: server.url, keyId: homeKey.keyId, keySecret: homeKey.keySecret, logLevel: 'off' })
})
afterAll(async () => {
  await client.close()
  await server.close()
})

describe('server.clientOptions()', () => {
  it('is the server’s URL and the first company’s first key: a client in one line', async () => {
    expect(server.clientOptions()).toEqual({ baseUrl: server.url, keyId: homeKey.keyId, keySecret: homeKey.keySecret })
    const oneLine = new ChatServiceClient(server.clientOptions())
    const agents = await oneLine.agents.list()
    expect(agents.data.map((agent) => agent.id)).toEqual(fake.listAgents(home.id).map((agent) => agent.id))
    await oneLine.close()
  })

  it('throws when the fake has no company, or its first company has no key', async () => {
    const empty = createFakeChatService()
    const emptyServer = await empty.listen()
    try {
      expect(() => emptyServer.clientOptions()).toThrow('clientOptions() needs a company, and the fake has none')
      empty.seed({
        companies: [
          { id: 'keyless', keys: [] },
          { id: 'keyed', keys: [{ keyId: 'k1', keySecret: 's1' }] },
        ],
      })
      expect(() => emptyServer.clientOptions()).toThrow('the first company, keyless, has no API key')
    } finally {
      await emptyServer.close()
    }
  })
})

describe('the fake through the SDK', () => {
  it('iterates every customer user of the company, and only of the company', async () => {
    const ids: string[] = []
    for await (const user of client.customerUsers.list({ limit: 10 })) ids.push(user.id)
    expect(ids).toEqual(fake.listCustomerUsers(home.id).map((user) => user.id))
    expect(ids).toHaveLength(45)
  })

  it('filters by external_id (in the GET body)', async () => {
    const target = fake.listCustomerUsers(home.id)[7]!
    const page = await client.customerUsers.list({ external_id: target.external_id })
    expect(page.data.map((user) => user.id)).toEqual([target.id])
    expect(fake.requests.at(-1)?.body).toEqual({ keyId: homeKey.keyId, keySecret: homeKey.keySecret, external_id: target.external_id })
  })

  it('every message of every conversation, oldest first, matching message_count', async () => {
    let total = 0
    for await (const conversation of client.conversations.list()) {
      const messages = []
      for await (const message of client.conversations.messages.list(conversation.id, { limit: 7 })) messages.push(message)
      expect(messages).toHaveLength(conversation.message_count)
      const times = messages.map((message) => message.created_at)
      expect(times).toEqual([...times].sort())
      total += messages.length
    }
    expect(total).toBe(130)
  })

  it("another company's records are NotFoundError", async () => {
    const foreignUser = fake.listCustomerUsers(other.id)[0]!
    const foreignConversation = fake.listConversations(other.id)[0]!
    await expect(client.customerUsers.update(foreignUser.id, { name: 'x' })).rejects.toBeInstanceOf(NotFoundError)
    await expect(client.conversations.messages.list(foreignConversation.id)).rejects.toBeInstanceOf(NotFoundError)
  })

  it('update changes only the fields given and moves updated_at', async () => {
    const before = fake.listCustomerUsers(home.id)[3]!
    const updated = await client.customerUsers.update(before.id, { email: 'new@example.com' })
    expect(updated).toMatchObject({ id: before.id, name: before.name, email: 'new@example.com', metadata: before.metadata })
    expect(updated.updated_at > before.updated_at).toBe(true)
    expect(Object.keys(updated).sort()).toEqual(['active', 'email', 'external_id', 'id', 'metadata', 'name', 'updated_at'])
  })

  it('issues a token the fake verifies, bound to the agent, with the requested lifetime', async () => {
    const agent = fake.listAgents(home.id).find((a) => a.active)!
    const result = await client.auth.issueToken({ userId: 'brand-new-user', agentId: agent.id, expiresIn: '2h' })
    const verified = fake.verifyToken(result.token)
    expect(verified.valid).toBe(true)
    if (verified.valid) {
      expect(verified.claims).toMatchObject({ sub: result.user.id, external_id: 'brand-new-user', agent_id: agent.id })
      expect(verified.claims.exp - verified.claims.iat).toBe(2 * 3600)
    }
    expect(result.agent).toEqual({ id: agent.id, name: agent.name, active: true })
    expect(fake.findCustomerUserByExternalId(home.id, 'brand-new-user')?.id).toBe(result.user.id)
  })

  it('a token without an agent: agent null is accepted', async () => {
    const result = await client.auth.issueToken({ userId: 'agentless' })
    expect(result.agent ?? null).toBeNull()
    expect(result.user.agentId ?? null).toBeNull()
  })

  it('wrong credentials are AuthenticationError on every endpoint', async () => {
    const wrong = new ChatServiceClient({ baseUrl: server.url, keyId: homeKey.keyId, keySecret: 'not-the-secret', logLevel: 'off' })
    const calls: Promise<unknown>[] = [
      wrong.auth.issueToken({ userId: 'u' }),
      wrong.customerUsers.list(),
      wrong.customerUsers.update('cu_1', { name: 'n' }),
      wrong.agents.list(),
      wrong.conversations.list(),
      wrong.conversations.messages.list('conv_1'),
    ]
    for (const call of calls) await expect(call).rejects.toBeInstanceOf(AuthenticationError)
    await wrong.close()
  })

  it('a page past the end is empty; a scripted 400 surfaces as BadRequestError', async () => {
    const page = await client.agents.list({ page: 99, limit: 100 })
    expect(page.data).toEqual([])
    expect(page.hasNextPage()).toBe(false)
    fake.failNext(1, { status: 400 })
    await expect(client.agents.list()).rejects.toBeInstanceOf(BadRequestError)
  })
})
