// @vitest-environment happy-dom
// DOM test environments (issue 21): many full-stack repositories run every test under vitest's
// happy-dom (or jsdom) environment, which adds `window` and `document` to the Node.js process. That
// process is still a server: the client starts, and talks to the fake, as under the node environment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { APIUserAbortError, ChatServiceClient, NotFoundError } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type FakeServerHandle } from 'chat-service-sdk/testing'

const fake = createFakeChatService({ seed: generateDataset({ seed: 8, customerUsers: 30, conversations: 5, messages: 60 }) })
let server: FakeServerHandle
let client: ChatServiceClient

beforeAll(async () => {
  server = await fake.listen()
  client = new ChatServiceClient({ ...server.clientOptions(), logLevel: 'off' })
})
afterAll(async () => {
  await client.close()
  await server.close()
})

describe('under vitest’s happy-dom environment', () => {
  it('is a DOM environment inside Node.js', () => {
    const dom = globalThis as { window?: unknown; document?: { createElement?: unknown }; navigator?: { userAgent?: string } }
    expect(typeof dom.window).toBe('object')
    expect(typeof dom.document?.createElement).toBe('function')
    expect(dom.navigator?.userAgent).toContain('HappyDOM')
    expect(typeof process.versions.node).toBe('string')
  })

  it('starts the client and runs every kind of call against the fake', async () => {
    const users = []
    for await (const user of client.customerUsers.list({ limit: 7 })) users.push(user.id)
    expect(users).toEqual(fake.listCustomerUsers('comp_1').map((u) => u.id))

    const found = await client.customerUsers.list({ external_id: 'ext_00003' }) // a filter in the GET body
    expect(found.data.map((u) => u.id)).toEqual(['cu_00003'])

    const issued = await client.auth.issueToken({ userId: 'dom-user', expiresIn: '1h' })
    expect(fake.verifyToken(issued.token).valid).toBe(true)

    const messages = []
    for await (const message of client.conversations.messages.listAll({ concurrency: 4 })) messages.push(message.id)
    expect(messages).toHaveLength(60)

    await expect(client.conversations.messages.list('conv_missing')).rejects.toThrow(NotFoundError)
  })

  it('takes the environment’s AbortController (happy-dom’s own) for cancellation', async () => {
    const controller = new AbortController()
    fake.failNext(1, { delayMs: 5_000 })
    const call = client.agents.list({}, { signal: controller.signal })
    setTimeout(() => {
      controller.abort(new Error('user left the page'))
    }, 20)
    await expect(call).rejects.toThrow(APIUserAbortError)
  })
})
