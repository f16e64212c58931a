// The check of a response body accepts exactly the documented shapes, whatever checks it (since
// 0.3 the SDK checks bodies without building a copy of them: zod's compiled validator, with
// safeParse only for the issues of a body it refuses). Every single mutation of a valid page, at
// the public API, with undici's MockAgent as the dispatcher: a valid page with ONE mutation is accepted exactly when
// the mutation keeps the documented shape (an unknown field, null where null is allowed, another
// string), and then comes back exactly as sent; any other mutation (a missing field, a value of
// another type, a number that is not a whole number or is out of range, an item that is not an
// object) is a ResponseValidationError under 'strict', and comes back as sent under 'warn'.
import { MockAgent } from 'undici'
import { describe, expect, it } from 'vitest'
import { ChatServiceClient, ResponseValidationError } from 'chat-service-sdk'
import { agent, conversation, customerUser, message, pagination } from '../helpers/fixtures.ts'

const ORIGIN = 'https://chat.example.com'

/** What a leaf may hold, as the spec and the SDK's types document it. */
type Leaf = 'string' | 'string|null' | 'boolean' | 'int>=0' | 'int>=1' | 'object|null'
type Shape = { [key: string]: Leaf | Shape }

const PAGINATION: Shape = { page: 'int>=1', limit: 'int>=1', total: 'int>=0', total_pages: 'int>=0' }
const CASES = {
  messages: {
    item: { id: 'string', content: 'string', role: 'string', conversation_id: 'string', created_at: 'string' },
    extra: { conversation: { id: 'string', title: 'string' } },
    body: () => ({
      data: [1, 2, 3].map((i) => message(i)),
      pagination: pagination(1, 3, 3),
      conversation: { id: 'conv-1', title: 'Conversation 1' },
    }),
    call: (client: ChatServiceClient) => client.conversations.messages.list('conv-1', { limit: 3 }),
  },
  customerUsers: {
    item: {
      id: 'string',
      external_id: 'string',
      name: 'string|null',
      email: 'string|null',
      metadata: 'object|null',
      active: 'boolean',
      created_at: 'string',
      last_seen_at: 'string|null',
    },
    extra: {},
    body: () => ({ data: [1, 2].map((i) => customerUser(i)), pagination: pagination(1, 2, 2) }),
    call: (client: ChatServiceClient) => client.customerUsers.list({ limit: 2 }),
  },
  conversations: {
    item: {
      id: 'string',
      title: 'string',
      customer_user_id: 'string',
      message_count: 'int>=0',
      created_at: 'string',
      updated_at: 'string',
    },
    extra: {},
    body: () => ({ data: [1, 2].map((i) => conversation(i)), pagination: pagination(1, 2, 2) }),
    call: (client: ChatServiceClient) => client.conversations.list({ limit: 2 }),
  },
  agents: {
    item: { id: 'string', name: 'string', active: 'boolean', created_at: 'string', updated_at: 'string' },
    extra: {},
    body: () => ({ data: [1, 2].map((i) => agent(i)), pagination: pagination(1, 2, 2) }),
    call: (client: ChatServiceClient) => client.agents.list({ limit: 2 }),
  },
} satisfies Record<string, { item: Shape; extra: Shape; body: () => Record<string, unknown>; call: (c: ChatServiceClient) => unknown }>
type CaseName = keyof typeof CASES

/** Values that break each kind of leaf (`''` is a string; 0 breaks int>=1 only; paging rules are not exercised). */
const WRONG: Record<Leaf, readonly unknown[]> = {
  string: [42, 1.5, true, null, [], {}],
  'string|null': [42, true, [], { a: 1 }],
  boolean: ['true', 0, 1, null, [], {}],
  'int>=0': [1.5, -1, '3', true, null, [], {}],
  'int>=1': [0, 1.5, -1, '1', true, null, [], {}],
  'object|null': [42, 'x', true, [], [{ a: 1 }]],
}
/** Values each kind of leaf accepts, besides the one the fixture has (none for numbers: they must agree with the paging rules). */
const RIGHT: Record<Leaf, readonly unknown[]> = {
  string: ['', 'é日本', 'x'.repeat(300)],
  'string|null': [null, '', 'ünïcode'],
  boolean: [true, false],
  'int>=0': [],
  'int>=1': [],
  'object|null': [null, {}, { deep: { er: [1, null, 'x'] } }],
}

/** Where in a body: ['data', 1, 'name'], ['pagination', 'total'], ['conversation', 'title']. */
type Path = (string | number)[]
interface Mutation {
  path: Path
  /** `undefined`: remove the member. */
  value?: unknown
  remove?: true
  /** An unknown member to add at `path` (an object). */
  add?: { key: string; value: unknown }
  valid: boolean
  why: string
}

function leaves(shape: Shape, at: Path): { path: Path; leaf: Leaf }[] {
  return Object.entries(shape).flatMap(([key, kind]) =>
    typeof kind === 'string' ? [{ path: [...at, key], leaf: kind }] : leaves(kind, [...at, key]),
  )
}

function objects(shape: Shape, at: Path): Path[] {
  return [at, ...Object.entries(shape).flatMap(([key, kind]) => (typeof kind === 'string' ? [] : objects(kind, [...at, key])))]
}

/** Every single mutation of a case's body, with whether it keeps the documented shape. */
function mutations(name: CaseName): Mutation[] {
  const c = CASES[name]
  const body = c.body()
  const items = (body.data as unknown[]).length
  const itemLeaves = Array.from({ length: items }, (_, i) => leaves(c.item, ['data', i])).flat()
  const all = [...itemLeaves, ...leaves({ pagination: PAGINATION, ...c.extra }, [])]
  const found: Mutation[] = []
  for (const { path, leaf } of all) {
    found.push({ path, remove: true, valid: false, why: `${path.join('.')} missing` })
    for (const value of WRONG[leaf])
      found.push({ path, value, valid: false, why: `${path.join('.')} = ${JSON.stringify(value)} (${leaf})` })
    // Ids are compared with what was asked (a message page's conversation): keep them.
    if (path.at(-1) !== 'id' && path.at(-1) !== 'conversation_id')
      for (const value of RIGHT[leaf])
        found.push({ path, value, valid: true, why: `${path.join('.')} = ${JSON.stringify(value)} (${leaf})` })
  }
  const containers = [
    [],
    ...Array.from({ length: items }, (_, i) => ['data', i]),
    ...objects({ pagination: PAGINATION, ...c.extra }, []).slice(1),
  ]
  for (const path of containers) {
    for (const [key, value] of [
      ['x_new_field', { nested: [1, 'two', null] }],
      ['__proto__', { polluted: true }],
      ['constructor', 'not a function'],
    ] as const) {
      found.push({ path, add: { key, value }, valid: true, why: `unknown member ${key} at ${path.join('.') || '(root)'}` })
    }
  }
  for (let i = 0; i < items; i++) {
    for (const value of [null, 'item', 7, [], [c.body()]])
      found.push({ path: ['data', i], value, valid: false, why: `data.${i} = ${JSON.stringify(value)}` })
  }
  found.push({ path: ['data'], value: {}, valid: false, why: 'data is an object' })
  return found
}

/** The body as JSON text with the mutation applied (text, so that `__proto__` is an own member, as JSON.parse makes it). */
function mutated(name: CaseName, m: Mutation): string {
  const body: unknown = CASES[name].body()
  const parent = m.path
    .slice(0, m.add === undefined ? -1 : undefined)
    .reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], body) as Record<string | number, unknown>
  const last = m.path.at(-1)!
  const marker = '"__mutation_marker__"'
  if (m.add !== undefined) parent['__mutation_marker__'] = 0
  else if (m.remove === true) Reflect.deleteProperty(parent, last)
  else parent[last] = m.value
  const text = JSON.stringify(body)
  return m.add === undefined ? text : text.replace(`${marker}:0`, `${JSON.stringify(m.add.key)}:${JSON.stringify(m.add.value)}`)
}

async function reply(
  text: string,
  validation: 'strict' | 'warn',
  call: (client: ChatServiceClient) => unknown,
): Promise<{ data: unknown } | { error: unknown }> {
  const mock = new MockAgent()
  mock.disableNetConnect()
  mock
    .get(ORIGIN)
    .intercept({ path: () => true, method: () => true })
    .reply(200, text, { headers: { 'content-type': 'application/json' } })
  const client = new ChatServiceClient({
    baseUrl: ORIGIN,
    keyId: 'key',
    keySecret: 'secret',
    dispatcher: mock,
    maxRetries: 0,
    logLevel: 'off',
    responseValidation: validation,
  })
  try {
    const page = (await call(client)) as { data: unknown; pagination: unknown }
    return { data: page }
  } catch (error) {
    return { error }
  } finally {
    await mock.close()
  }
}

describe('response checks accept exactly the documented shapes', () => {
  for (const name of Object.keys(CASES) as CaseName[]) {
    const all = mutations(name)
    it(`${name}: each of the ${all.length} single mutations of a valid page is refused exactly when it breaks the shape; a page that passes comes back as sent`, async () => {
      expect(all.filter((m) => m.valid).length).toBeGreaterThan(5)
      expect(all.filter((m) => !m.valid).length).toBeGreaterThan(20)
      for (const m of all) {
        const text = mutated(name, m)
        const result = await reply(text, 'strict', CASES[name].call)
        if (!m.valid) {
          expect((result as { error?: unknown }).error, m.why).toBeInstanceOf(ResponseValidationError)
          continue
        }
        expect(result, m.why).not.toHaveProperty('error')
        const page = (result as { data: Record<string, unknown> }).data
        const sent = JSON.parse(text) as Record<string, unknown>
        expect(page['data'], m.why).toStrictEqual(sent['data'])
        expect(page['pagination'], m.why).toStrictEqual(sent['pagination'])
        if (m.add?.key === '__proto__' && m.path.length > 0) {
          // Kept as a plain own member of the object it came in, as JSON.parse made it.
          const holder = m.path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], page)
          expect(Object.hasOwn(holder as object, '__proto__'), m.why).toBe(true)
        }
        expect(({} as Record<string, unknown>)['polluted'], m.why).toBeUndefined()
      }
    })
  }

  it("under 'warn', each item that breaks the shape comes back exactly as sent", async () => {
    const broken = mutations('messages').filter((m) => !m.valid && m.path[0] === 'data' && m.path.length === 3)
    expect(broken.length).toBeGreaterThan(20)
    for (const m of broken) {
      const text = mutated('messages', m)
      const result = await reply(text, 'warn', CASES.messages.call)
      expect(result, m.why).not.toHaveProperty('error')
      const page = (result as { data: { data: unknown } }).data
      expect(page.data, m.why).toStrictEqual((JSON.parse(text) as { data: unknown }).data)
    }
  })
})
