// The README's Redis `rateLimitStore` (examples/distributed-export/rate-limit-store.ts) against a
// real Redis (scripts/redis.ts): its `take` keeps the contract of RateLimitStore.take (the newer
// learned rate wins; a bucket that refills at the rate asked, up to burst, and keeps the reserve;
// `tokens: 0` leaves the bucket alone), and two clients sharing it export one company against one
// limit, every message once, out of one budget.
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import { redisRateLimitStore } from '../../examples/distributed-export/rate-limit-store.ts'
import { startRedis, type RunningRedis } from '../../scripts/redis.ts'

let server: RunningRedis
let redis: Redis

beforeAll(async () => {
  server = await startRedis() // installs redis-server first if it is missing (as root), else says how
  redis = new Redis(server.url)
}, 300_000)

afterAll(async () => {
  redis.disconnect()
  await server.stop()
})

const take = { reserve: 0, ratePerSecond: 0, burst: 0, accepted: 0 }

describe('take, as the contract says', () => {
  it("is the script docs/rate-limits.md shows users (the guide's snippet runs against an in-memory stand-in)", () => {
    const script = (text: string): string | undefined => /const TAKE = `([^`]*)`/.exec(text)?.[1]
    const example = script(readFileSync(new URL('../../examples/distributed-export/rate-limit-store.ts', import.meta.url), 'utf8'))
    expect(example).toBeDefined()
    expect(script(readFileSync(new URL('../../docs/rate-limits.md', import.meta.url), 'utf8'))).toBe(example)
  })

  it('keeps the learned rate with the later at, and answers it', async () => {
    const store = redisRateLimitStore(redis, 'test:learned')
    expect(await store.take!({ ...take, tokens: 0 })).toMatchObject({ tokens: 0, learned: null })
    const learned = { max: 42.5, at: 1_000, recoveryMs: 3_000 }
    expect(await store.take!({ ...take, tokens: 0, learned })).toMatchObject({ tokens: 0, learned })
    expect(await store.take!({ ...take, tokens: 0, learned: { max: 10, at: 999, recoveryMs: 0 } })).toMatchObject({ tokens: 0, learned })
    const newer = { max: 30, at: 1_001, recoveryMs: 0 }
    expect(await store.take!({ ...take, tokens: 0, learned: newer })).toMatchObject({ tokens: 0, learned: newer })
  })

  it('keeps the learned rate a week after the last take (the SDK climbs from a limit up to a week old), not 10 minutes', async () => {
    const store = redisRateLimitStore(redis, 'test:kept')
    await store.take!({ ...take, tokens: 0, learned: { max: 42.5, at: 1_000, recoveryMs: 20_000 } })
    const ttl = await redis.pttl('test:kept:pacing')
    expect(ttl).toBeGreaterThan(7 * 86_400_000 - 60_000)
    expect(ttl).toBeLessThanOrEqual(7 * 86_400_000)
  })

  it('a bucket full at first, never granting past the reserve, refilled at the rate asked', async () => {
    const store = redisRateLimitStore(redis, 'test:bucket')
    // A token every 1,000 s: nothing refills while the test runs, however slow the machine.
    const ask = { tokens: 4, reserve: 2, ratePerSecond: 0.001, burst: 5, accepted: 0 }
    expect((await store.take!(ask)).tokens).toBe(3) // 5 - reserve 2
    expect((await store.take!(ask)).tokens).toBe(0)
    expect((await store.take!({ ...ask, reserve: 0 })).tokens).toBe(2) // an interactive take gets the reserve
    // tokens: 0 does not touch the bucket (nor its clock).
    expect((await store.take!({ ...ask, tokens: 0, ratePerSecond: 1e6 })).tokens).toBe(0)
    expect((await store.take!({ ...ask, reserve: 0 })).tokens).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 20)) // 20,000 tokens' worth at 1e6/s; the bucket holds 5
    expect((await store.take!({ ...ask, tokens: 10, reserve: 0, ratePerSecond: 1e6 })).tokens).toBe(5)
  })

  it("adds up what the processes accepted, per second of Redis's clock, and answers it", async () => {
    expect((await redisRateLimitStore(redis, 'test:accepted').take!({ ...take, tokens: 0 })).acceptedPerSecond).toBe(0)
    // Two takes in one second of Redis's clock answer their sum; across a second boundary the
    // older one counts for the share of it still inside the last 1,000 ms (between 20 and 50).
    for (let attempt = 1; ; attempt++) {
      const store = redisRateLimitStore(redis, `test:accepted-${attempt}`)
      const [before] = await redis.time()
      await store.take!({ ...take, tokens: 0, accepted: 30 })
      const { acceptedPerSecond } = await store.take!({ ...take, tokens: 1, ratePerSecond: 1, burst: 1, accepted: 20 })
      const [after] = await redis.time()
      expect(acceptedPerSecond).toBeGreaterThanOrEqual(20)
      expect(acceptedPerSecond).toBeLessThanOrEqual(50)
      if (before === after) {
        expect(acceptedPerSecond).toBe(50)
        return
      }
      if (attempt === 4) throw new Error('four tries never ran in one second of Redis time')
    }
  })

  it("weighs the last second's count by the share of it still inside the last 1,000 ms, and forgets an older one", async () => {
    const store = redisRateLimitStore(redis, 'test:weights')
    const ms = (time: readonly (number | string)[]): number => Number(time[0]) * 1_000 + Math.floor(Number(time[1]) / 1_000)
    for (let attempt = 1; ; attempt++) {
      const before = ms(await redis.time())
      const second = Math.floor(before / 1_000)
      // 100 accepted in the last second of Redis's clock, 10 in this one.
      await redis.hset('test:weights:pacing', { second: second - 1, accepted: 100, acceptedBefore: 0 })
      const { acceptedPerSecond } = await store.take!({ ...take, tokens: 0, accepted: 10 })
      const after = ms(await redis.time())
      if (Math.floor(after / 1_000) === second) {
        // Between what the weighting gives at the first and at the last moment the take could have run.
        expect(acceptedPerSecond).toBeLessThanOrEqual(10 + 100 * (1 - (before % 1_000) / 1_000) + 0.001)
        expect(acceptedPerSecond).toBeGreaterThanOrEqual(10 + 100 * (1 - (after % 1_000) / 1_000) - 0.001)
        break
      }
      if (attempt === 4) throw new Error('four tries never ran in one second of Redis time')
    }
    // A count two seconds old is forgotten: only this second's is answered.
    const second = Math.floor(ms(await redis.time()) / 1_000)
    await redis.hset('test:weights:pacing', { second: second - 2, accepted: 100, acceptedBefore: 50 })
    const { acceptedPerSecond } = await store.take!({ ...take, tokens: 0, accepted: 7 })
    expect(acceptedPerSecond).toBe(7) // neither old count survives (a second boundary in between changes nothing)
  })
})

describe('two clients sharing it', () => {
  it('export one company against one limit: every message once, out of one budget', async () => {
    const fake = createFakeChatService({
      seed: generateDataset({ seed: 8, conversations: 16, messages: 1_000 }),
      // A burst of 2: the first requests in flight together meet a 429 however slow the machine
      // (with 10, a loaded CI machine sent too slowly to meet one, and nothing was learned to share).
      rateLimit: { requestsPerSecond: 80, burst: 2, retryAfter: 'none' },
    })
    const service = await fake.listen()
    const store = redisRateLimitStore(redis, 'test:export')
    const clients = [0, 1].map(() => new ChatServiceClient({ ...service.clientOptions(), rateLimitStore: store, logLevel: 'off' }))
    try {
      const shards = await Promise.all(
        clients.map(async (client, index) => {
          const seen: string[] = []
          for await (const m of client.conversations.messages.listAll({ limit: 10, concurrency: 8, shard: { index, count: 2 } }))
            seen.push(m.id)
          return seen
        }),
      )
      const expected = fake.listConversations('comp_1').flatMap((c) => fake.listMessages('comp_1', c.id).map((m) => m.id))
      expect(shards.flat().sort()).toEqual([...expected].sort())
      expect(await redis.hget('test:export:pacing', 'learnedAt')).not.toBeNull() // a learned rate was shared
      expect(Number(await redis.hget('test:export:pacing', 'at'))).toBeGreaterThan(0) // tokens were leased
    } finally {
      await Promise.all(clients.map((client) => client.close()))
      await service.close()
    }
  })
})
