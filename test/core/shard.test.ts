// Shards (issue 17): shardOf is the documented, stable function; listAll({ shard }) splits the
// company's messages into disjoint parts that together are exactly listAll's, each resumable.
import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, MAX_SHARDS, RequestValidationError, shardOf } from 'chat-service-sdk'
import { createFakeChatService, type FakeServerHandle } from 'chat-service-sdk/testing'
import { idsOf, KEY, seedOf } from '../helpers/list-all-data.ts'

describe('shardOf', () => {
  it('is the first 4 bytes of SHA-256 of the UTF-8 id, big-endian, modulo count: pinned values that must never change within a major version', () => {
    expect(shardOf('conv_42', 8)).toBe(7)
    expect(shardOf('conv_42', 1000)).toBe(447)
    expect(shardOf('c000', 8)).toBe(7)
    expect(shardOf('会話-1', 1000)).toBe(176)
    for (const id of ['x', 'conv_0001', '🙂', 'a/b?c']) {
      const expected = createHash('sha256').update(Buffer.from(id, 'utf8')).digest().readUInt32BE(0) % 97
      expect(shardOf(id, 97)).toBe(expected)
    }
  })

  it('spreads sequential ids evenly, and count 1 puts everything in shard 0', () => {
    const counts = new Array<number>(8).fill(0)
    for (let i = 0; i < 8000; i++) counts[shardOf(`conv_${String(i).padStart(4, '0')}`, 8)]!++
    for (const count of counts) expect(count).toBeGreaterThan(850)
    expect(shardOf('anything', 1)).toBe(0)
  })

  it.each([0, -1, 1.5, Number.NaN, MAX_SHARDS + 1])('refuses count %s with a RangeError', (count) => {
    expect(() => shardOf('c', count)).toThrow(RangeError)
  })
})

describe('listAll({ shard })', () => {
  const servers: FakeServerHandle[] = []
  const clients: ChatServiceClient[] = []
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
    for (const server of servers.splice(0)) await server.close()
  })

  async function serve(sizes: readonly number[]): Promise<ChatServiceClient> {
    const server = await createFakeChatService({ seed: seedOf(sizes) }).listen()
    servers.push(server)
    const client = new ChatServiceClient({ baseUrl: server.url, ...KEY })
    clients.push(client)
    return client
  }

  it('shards are disjoint and together are every message, each in nested-loop order', async () => {
    const client = await serve(Array.from({ length: 230 }, (_, i) => i % 5))
    const all = await idsOf(client.conversations.messages.listAll({ limit: 3 }))
    const count = 4
    const shards = await Promise.all(
      Array.from({ length: count }, (_, index) => idsOf(client.conversations.messages.listAll({ limit: 3, shard: { index, count } }))),
    )
    expect(shards.flat().sort()).toEqual([...all].sort())
    shards.forEach((ids, index) => {
      // Each shard keeps the order of the whole export, restricted to its conversations.
      expect(ids).toEqual(all.filter((id) => shardOf(id.slice(0, 'conv_0000'.length), count) === index))
    })
  })

  it("a shard's cursor resumes that shard with no gap and no duplicate", async () => {
    const client = await serve(Array.from({ length: 150 }, (_, i) => 1 + (i % 4)))
    const shard = { index: 1, count: 3 }
    const whole = await idsOf(client.conversations.messages.listAll({ shard }))
    const first = client.conversations.messages.listAll({ shard })
    const head: string[] = []
    for await (const message of first) {
      head.push(message.id)
      if (head.length === 50) break
    }
    const rest = await idsOf(client.conversations.messages.listAll({ shard, cursor: first.cursor() }))
    expect([...head, ...rest]).toEqual(whole)
    // The cursor remembers its shard: given alone, it resumes the same shard.
    const alone = await idsOf(client.conversations.messages.listAll({ cursor: first.cursor() }))
    expect([...head, ...alone]).toEqual(whole)
  })

  it('a cursor resumed with another shard, or a shard cursor with none where it had one, is refused before anything is sent', async () => {
    const client = await serve(Array.from({ length: 20 }, () => 2))
    const sharded = client.conversations.messages.listAll({ shard: { index: 0, count: 2 } })
    for await (const _ of sharded) break
    expect(() => client.conversations.messages.listAll({ cursor: sharded.cursor(), shard: { index: 1, count: 2 } })).toThrow(
      /The cursor was taken with shard 0 of 2; resume with the same shard, or give none/,
    )
    const whole = client.conversations.messages.listAll()
    for await (const _ of whole) break
    expect(() => client.conversations.messages.listAll({ cursor: whole.cursor(), shard: { index: 0, count: 2 } })).toThrow(
      /The cursor was taken without a shard/,
    )
  })

  it('a cursor of 0.2 (format 1, no shard) still resumes', async () => {
    const client = await serve([3, 3])
    const all = await idsOf(client.conversations.messages.listAll())
    // [version, limit, done, parent, parentId, childPage, childIndex, childId]: after the first message.
    const v1 = Buffer.from(JSON.stringify([1, 100, 1, 0, 'conv_0000', 1, 0, all[0]])).toString('base64url')
    expect(await idsOf(client.conversations.messages.listAll({ cursor: v1 }))).toEqual(all.slice(1))
  })

  it.each([
    [{ index: 2, count: 2 }, 'index'],
    [{ index: -1, count: 2 }, 'index'],
    [{ index: 0, count: 0 }, 'count'],
    [{ index: 0.5, count: 2 }, 'index'],
    [{ index: 0, count: MAX_SHARDS + 1 }, 'count'],
  ])('refuses shard %j before anything is sent', async (shard, field) => {
    const client = await serve([1])
    let error: unknown
    try {
      client.conversations.messages.listAll({ shard })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as RequestValidationError).issues.map((issue) => issue.path)).toContainEqual(['shard', field])
  })
})
