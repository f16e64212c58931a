// listNew in 0.4 (API.md "Added in 0.4"): a checkpoint records the service and key it was made
// with, and another service's or company's is refused before anything is sent (issue 28); 0.3
// checkpoints keep working; onConversation hands out every conversation the scan lists, once,
// without a second listing (issue 29).
import { afterEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, RequestValidationError, type Conversation, type MessagesCheckpoint } from 'chat-service-sdk'
import { createFakeChatService, type FakeChatService, type FakeServerHandle } from 'chat-service-sdk/testing'
import { COMPANY_ID, KEY, seedOf } from '../helpers/list-all-data.ts'
import { recordingLogger } from '../helpers/loopback.ts'

const OTHER_KEY = { keyId: 'key_other', keySecret: 'sk_other_company_7Yq2' }

const open: { close: () => Promise<void> }[] = []
afterEach(async () => {
  for (const item of open.splice(0)) await item.close()
})

async function serve(sizes: readonly number[]): Promise<{ fake: FakeChatService; server: FakeServerHandle; client: ChatServiceClient }> {
  const seed = seedOf(sizes)
  seed.companies.push({
    id: 'comp_other',
    keys: [OTHER_KEY],
    conversations: [
      { id: 'c-x', title: 'x', customer_user_id: 'u', created_at: '2024-01-01T00:00:00.000Z', updated_at: '2024-01-01T00:00:00.000Z' },
    ],
  })
  const fake = createFakeChatService({ seed })
  const server = await fake.listen()
  const client = new ChatServiceClient({ baseUrl: server.url, ...KEY, logLevel: 'off' })
  open.push({ close: () => client.close() }, server)
  return { fake, server, client }
}

async function night(client: ChatServiceClient, params: Parameters<ChatServiceClient['conversations']['messages']['listNew']>[0] = {}) {
  const run = client.conversations.messages.listNew(params)
  const ids: string[] = []
  for await (const message of run) ids.push(message.id)
  return { run, ids, checkpoint: run.checkpoint() }
}

describe('a checkpoint records the service and key it was made with', () => {
  it('{ baseUrl: the API root, keyId }, never the secret, in the full and the compact form', async () => {
    const { server, client } = await serve([2, 3])
    const { run, checkpoint } = await night(client)
    expect(checkpoint.service).toEqual({ baseUrl: `${server.url}/rest/v1`, keyId: KEY.keyId })
    expect(run.checkpoint({ compact: true }).service).toEqual(checkpoint.service)
    expect(JSON.stringify(checkpoint)).not.toContain(KEY.keySecret)
  })

  it("another service's checkpoint is a RequestValidationError, nothing sent", async () => {
    const { fake, client } = await serve([2, 3])
    const { checkpoint } = await night(client)
    fake.clearRequests()
    const foreign: MessagesCheckpoint = { ...checkpoint, service: { baseUrl: 'https://chat.other.example/rest/v1', keyId: KEY.keyId } }
    let error: unknown
    try {
      client.conversations.messages.listNew({ checkpoint: foreign })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(RequestValidationError)
    const { issues } = error as RequestValidationError
    expect(issues.map((issue) => issue.path)).toEqual([['checkpoint', 'service']])
    expect(issues[0]?.message).toContain('made with https://chat.other.example/rest/v1, not ')
    expect(fake.requests).toHaveLength(0)
  })

  it("another company's (another key's) checkpoint is refused too, also inside an array of shard checkpoints", async () => {
    const { fake, server, client } = await serve([2, 3])
    const mine = await night(client)
    const other = new ChatServiceClient({ baseUrl: server.url, ...OTHER_KEY, logLevel: 'off' })
    open.push({ close: () => other.close() })
    const theirs = await night(other)
    expect(theirs.checkpoint.service?.keyId).toBe(OTHER_KEY.keyId)
    fake.clearRequests()
    expect(() => client.conversations.messages.listNew({ checkpoint: [mine.checkpoint, theirs.checkpoint] })).toThrow(
      RequestValidationError,
    )
    try {
      client.conversations.messages.listNew({ checkpoint: [mine.checkpoint, theirs.checkpoint] })
    } catch (error) {
      expect((error as RequestValidationError).issues).toEqual([
        expect.objectContaining({
          path: ['checkpoint', 1, 'service'],
          message: expect.stringContaining(`key ${OTHER_KEY.keyId}, not ${KEY.keyId}`) as unknown,
        }),
      ])
    }
    expect(fake.requests).toHaveLength(0)
  })

  it('the same service spelt another way (a trailing slash, /rest/v1 given) is the same service', async () => {
    const { server, client } = await serve([2, 3])
    const { checkpoint } = await night(client)
    for (const baseUrl of [`${server.url}/`, `${server.url}/rest/v1`, `${server.url}/rest/v1/`]) {
      const again = new ChatServiceClient({ baseUrl, ...KEY, logLevel: 'off' })
      open.push({ close: () => again.close() })
      expect((await night(again, { checkpoint })).ids).toEqual([])
    }
  })

  it('a 0.3 checkpoint (no service member) keeps working, with one warning; the next checkpoint records the service', async () => {
    const { fake, server } = await serve([2, 3])
    const logger = recordingLogger()
    const client = new ChatServiceClient({ baseUrl: server.url, ...KEY, logger })
    open.push({ close: () => client.close() })
    const { checkpoint } = await night(client)
    const { service: _made, ...legacy } = checkpoint
    fake.appendMessages(COMPANY_ID, 'conv_0001', 1)
    const second = await night(client, { checkpoint: legacy as MessagesCheckpoint })
    expect(second.ids).toHaveLength(1)
    expect(second.checkpoint.service).toEqual(checkpoint.service)
    expect(logger.messages('warn')).toEqual([expect.stringContaining('made by 0.3')])
    expect(logger.messages('warn')[0]).toContain(`taken as ${server.url}/rest/v1 with key ${KEY.keyId}`)
  })

  it('a malformed service member is a RequestValidationError naming it', async () => {
    const { client } = await serve([1])
    const { checkpoint } = await night(client)
    expect(() =>
      client.conversations.messages.listNew({ checkpoint: { ...checkpoint, service: { baseUrl: 1, keyId: 'k' } as never } }),
    ).toThrow(/checkpoint\.service: Expected \{ baseUrl, keyId \}/)
  })
})

describe('onConversation', () => {
  it('gets every conversation the scan lists, once, as listed; a quiet night costs only the scan, not a second listing', async () => {
    const sizes = Array.from({ length: 250 }, (_, i) => i % 3)
    const { fake, client } = await serve(sizes)
    const seen: Conversation[] = []
    const first = await night(client, { onConversation: (conversation) => seen.push(conversation) })
    expect(seen.map((c) => c.id)).toEqual(fake.listConversations(COMPANY_ID).map((c) => c.id))
    expect(seen[1]).toEqual(fake.listConversations(COMPANY_ID)[1])
    fake.clearRequests()
    const again: string[] = []
    const quiet = await night(client, { checkpoint: first.checkpoint, onConversation: (conversation) => again.push(conversation.id) })
    expect(quiet.ids).toEqual([])
    expect(again).toHaveLength(250)
    expect(fake.requests).toHaveLength(3) // ceil(250 / 100): the scan, nothing more
  })

  it('with a shard: only the shard’s conversations; with a list that moves: still each once', async () => {
    const sizes = Array.from({ length: 250 }, () => 1)
    const { fake, client } = await serve(sizes)
    fake.moveList({ list: 'conversations', when: { page: 2 }, insert: { at: 'front', count: 2 } })
    const ids: string[] = []
    for (let index = 0; index < 2; index++) await night(client, { shard: { index, count: 2 }, onConversation: (c) => ids.push(c.id) })
    expect(new Set(ids).size).toBe(ids.length)
    const listed = new Set(fake.listConversations(COMPANY_ID).map((c) => c.id))
    const original = sizes.map((_, i) => `conv_${String(i).padStart(4, '0')}`)
    expect(original.filter((id) => listed.has(id) && !ids.includes(id))).toEqual([])
  })

  it('an error it throws ends the run with that error; a value that is not a function is refused before anything is sent', async () => {
    const { fake, client } = await serve([1, 1, 1])
    const boom = new Error('store is down')
    await expect(
      night(client, {
        onConversation: () => {
          throw boom
        },
      }),
    ).rejects.toBe(boom)
    fake.clearRequests()
    expect(() => client.conversations.messages.listNew({ onConversation: 'log' as never })).toThrow(RequestValidationError)
    expect(fake.requests).toHaveLength(0)
  })
})
