import { describe, expect, it } from 'vitest'
import { makeIso } from '../../src/testing/dataset.ts'
import { createFakeChatService, generateDataset, mulberry32 } from '../../src/testing/index.ts'

describe('mulberry32', () => {
  it('is a deterministic stream of floats in [0, 1)', () => {
    const a = mulberry32(1)
    const b = mulberry32(1)
    const xs = Array.from({ length: 1000 }, () => a())
    expect(xs).toEqual(Array.from({ length: 1000 }, () => b()))
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true)
    expect(new Set(xs).size).toBeGreaterThan(990)
    expect(mulberry32(2)()).not.toBe(xs[0])
  })
})

describe('generateDataset', () => {
  it('gives deep-equal data for the same seed and different data for another seed', () => {
    const opts = { seed: 123, agents: 6, customerUsers: 30, conversations: 20, messages: 400, companies: 2 }
    const a = generateDataset(opts)
    expect(generateDataset(opts)).toStrictEqual(a)
    const b = generateDataset({ ...opts, seed: 124 })
    expect(b).not.toEqual(a)
    expect(b.companies[0]!.keys[0]!.keySecret).not.toBe(a.companies[0]!.keys[0]!.keySecret)
    expect(b.companies[0]!.customerUsers!.map((u) => u.name)).not.toEqual(a.companies[0]!.customerUsers!.map((u) => u.name))
  })

  it('has an easy-to-find first key and per-company keys and ids', () => {
    const data = generateDataset({ seed: 5, companies: 3, customerUsers: 10, conversations: 5, messages: 50, agents: 2 })
    expect(data.companies.map((c) => c.id)).toEqual(['comp_1', 'comp_2', 'comp_3'])
    expect(data.companies.map((c) => c.keys[0]!.keyId)).toEqual(['key_test_1', 'key_test_2', 'key_test_3'])
    for (const c of data.companies) expect(c.keys[0]!.keySecret).toMatch(/^sk_test_[0-9a-f]{32}$/)
    const allIds = data.companies.flatMap((c) => [
      ...c.customerUsers!.map((u) => u.id),
      ...c.agents!.map((a) => a.id),
      ...c.conversations!.map((x) => x.id),
      ...c.messages!.map((m) => m.id),
    ])
    expect(new Set(allIds).size).toBe(allIds.length)
    // company 1 does not depend on how many companies there are
    expect(
      generateDataset({ seed: 5, companies: 1, customerUsers: 10, conversations: 5, messages: 50, agents: 2 }).companies[0],
    ).toStrictEqual(data.companies[0])
  })

  it('looks realistic and is internally consistent', () => {
    const data = generateDataset({ seed: 99, agents: 8, customerUsers: 40, conversations: 30, messages: 900 })
    const c = data.companies[0]!
    expect(c.agents).toHaveLength(8)
    expect(c.agents!.some((a) => !a.active)).toBe(true)
    expect(c.agents![0]!.active).toBe(true)
    expect(c.customerUsers![0]!.external_id).toBe('ext_00001')
    for (const u of c.customerUsers!) {
      expect(u.id).toMatch(/^cu_\d{5}$/)
      expect(u.external_id).toMatch(/^ext_\d{5}$/)
      expect(u.name).toMatch(/^\S+ \S+$/)
      expect(u.email).toMatch(/^[a-z.]+\d+@example\.(com|org|net)$/)
      expect(u.metadata).toMatchObject({ version: 1, preferences: expect.any(Object) as unknown, signup: expect.any(Object) as unknown })
      expect(Date.parse(u.last_seen_at)).toBeGreaterThanOrEqual(Date.parse(u.created_at))
    }
    const userIds = new Set(c.customerUsers!.map((u) => u.id))
    const created = c.customerUsers!.map((u) => u.created_at)
    expect([...created].sort()).toEqual(created)
    const messages = c.messages!
    expect(messages).toHaveLength(900)
    for (let i = 1; i < messages.length; i++) expect(messages[i]!.created_at > messages[i - 1]!.created_at).toBe(true)
    for (const conv of c.conversations!) {
      expect(userIds.has(conv.customer_user_id)).toBe(true)
      const own = messages.filter((m) => m.conversation_id === conv.id)
      expect(conv.message_count).toBe(own.length)
      own.forEach((m, i) => {
        expect(m.role).toBe(i % 2 === 0 ? 'user' : 'assistant')
      })
      if (own.length > 0) {
        expect(own[0]!.created_at > conv.created_at).toBe(true)
        expect(conv.updated_at).toBe(own.at(-1)!.created_at)
      }
    }
    const counts = c.conversations!.map((x) => x.message_count!)
    expect(Math.max(...counts)).toBeGreaterThan(Math.min(...counts)) // spread unevenly
    expect(counts.filter((n) => n > 0).length).toBeGreaterThan(20)
  })

  it('rejects impossible options', () => {
    expect(() => generateDataset({ seed: Number.NaN })).toThrow(RangeError)
    expect(() => generateDataset({ seed: 1, messages: -1 })).toThrow(RangeError)
    expect(() => generateDataset({ seed: 1, agents: 1.5 })).toThrow(RangeError)
    expect(() => generateDataset({ seed: 1, conversations: 0, messages: 10 })).toThrow(/conversation/)
    expect(() => generateDataset({ seed: 1, customerUsers: 0, conversations: 1 })).toThrow(/customer user/)
  })

  it('generates 1,000,000 messages and the fake serves them all', () => {
    const data = generateDataset({ seed: 1, messages: 1_000_000, conversations: 1_000, customerUsers: 200 })
    const c = data.companies[0]!
    expect(c.messages).toHaveLength(1_000_000)
    expect(c.messages![999_999]!.id).toBe('msg_1000000')
    expect(c.conversations!.reduce((sum, x) => sum + x.message_count!, 0)).toBe(1_000_000)
    const fake = createFakeChatService({ seed: data })
    const conversations = fake.listConversations('comp_1')
    expect(conversations.reduce((sum, x) => sum + x.message_count, 0)).toBe(1_000_000)
    expect(fake.listMessages('comp_1', conversations[500]!.id)).toHaveLength(conversations[500]!.message_count)
  }, 60_000)
})

describe('generated timestamps', () => {
  it('the fast formatter matches Date#toISOString', () => {
    const iso = makeIso()
    const rng = mulberry32(77)
    let t = Date.UTC(2023, 11, 31, 23, 59, 59, 999)
    for (let i = 0; i < 20_000; i++) {
      t += Math.floor(rng() * 3_600_000) + (i % 50 === 0 ? 86_400_000 * 40 : 0)
      expect(iso(t)).toBe(new Date(t).toISOString())
    }
    for (const ms of [0, -1, Date.UTC(1999, 0, 1), Date.UTC(2000, 1, 29, 12), Date.UTC(10000, 0, 1), -62198755200001]) {
      expect(iso(ms)).toBe(new Date(ms).toISOString())
    }
  })

  it('are valid ISO 8601 strings', () => {
    const data = generateDataset({ seed: 2024, messages: 3000, conversations: 40, customerUsers: 30, agents: 9 })
    const c = data.companies[0]!
    const stamps = [
      ...c.messages!.map((m) => m.created_at),
      ...c.conversations!.flatMap((x) => [x.created_at, x.updated_at]),
      ...c.customerUsers!.flatMap((u) => [u.created_at, u.last_seen_at]),
      ...c.agents!.flatMap((a) => [a.created_at, a.updated_at]),
    ]
    for (const s of stamps) expect(new Date(s).toISOString()).toBe(s)
  })
})
