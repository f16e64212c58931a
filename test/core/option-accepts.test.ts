/**
 * `new ChatServiceClient` takes well-formed options without zod (issue 32: constructing a client
 * must not build schemas or run zod's code): each option's quick check (`accepts` in the option
 * table) may only say yes to a value its schema accepts and outputs unchanged, and whatever it says
 * no to still goes to the schema. Held here for every row, over generated values near each
 * option's limits and of every other type; and at the constructor, over whole option objects.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ChatServiceClient, RequestValidationError } from 'chat-service-sdk'
import { OPTIONS } from '../../src/internal/option-table.ts'
import { acceptedClientOptions, clientOptionsSchema } from '../../src/internal/options-schema.ts'

/** Values around what options take: limits of each number, the enums' words, look-alikes of each object an option takes. */
const edgeValue = fc.oneof(
  fc.constantFrom(
    0,
    1,
    -1,
    0.5,
    31,
    32,
    33,
    100,
    101,
    65_536,
    65_537,
    2_147_483_647,
    2_147_483_648,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 1,
    NaN,
    Infinity,
    -0,
    1e21,
    '',
    ' ',
    '1',
    'x',
    'wait',
    'fail',
    'interactive',
    'batch',
    'adaptive',
    'off',
    'error',
    'warn',
    'info',
    'debug',
    'strict',
    'WARN',
    true,
    false,
    null,
    undefined,
    new URL('https://chat.example.com'),
    'https://chat.example.com',
    new AbortController().signal,
    { dispatch: () => true },
    { dispatch: 1 },
    console,
    { debug() {}, info() {}, warn() {} },
    { get: () => undefined, set: () => undefined },
    { get: () => undefined, set: () => undefined, take: 1 },
    { get: () => undefined, set: () => undefined, maxAgeMs: 60_001 },
    { get: () => undefined, set: () => undefined, maxAgeMs: 100 },
    {},
    { 'x-trace': 'a' },
    { 'X-Trace': 'é' },
    { 'x-trace': 'a\nb' },
    { 'x trace': 'a' },
    { accept: 'a' },
    { 'x-n': 1 },
    Object.create(null) as object,
    Object.assign(Object.create({ inherited: 'x' }) as object, { 'x-a': 'b' }),
    { [Symbol('s')]: 'v' },
    JSON.parse('{"__proto__": "x"}') as object,
    [],
    ['x'],
    () => undefined,
    10n,
  ),
  fc.integer({ min: -5, max: 70_000 }),
  fc.double(),
  fc.string(),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
  fc.anything(),
)

describe('the option table: accepts says yes only to values its schema takes as they are', () => {
  for (const [name, row] of Object.entries(OPTIONS)) {
    it(name, () => {
      const schema = row.schema()
      fc.assert(
        fc.property(edgeValue, (value) => {
          if (!row.accepts(value)) return
          const result = schema.safeParse(value)
          expect(result.success, `${name} accepts ${fc.stringify(value)}, its schema does not`).toBe(true)
          expect(result.data).toStrictEqual(value)
        }),
        { numRuns: 2_000 },
      )
    })
  }

  it('says yes to the ordinary values of each option (the constructor needs no zod for them)', () => {
    const ordinary: Record<keyof typeof OPTIONS, unknown> = {
      baseUrl: 'https://chat.example.com',
      keyId: 'key_1',
      keySecret: 'secret_12345678',
      timeout: 30_000,
      maxRetries: 2,
      totalTimeout: 120_000,
      rateLimitPause: 'fail',
      priority: 'batch',
      rateLimitStore: { get: () => undefined, set: () => undefined },
      pacing: 'off',
      dispatcher: { dispatch: () => true },
      headers: { 'x-trace-id': 'abc' },
      logger: console,
      logLevel: 'info',
      connections: 16,
      maxResponseBytes: 1_000_000,
      responseValidation: 'warn',
      compression: false,
      allowInsecureHttp: true,
      dangerouslyAllowBrowser: false,
      signal: new AbortController().signal,
      prefetch: 2,
      rescan: true,
    }
    for (const [name, value] of Object.entries(ordinary)) expect(OPTIONS[name as keyof typeof OPTIONS].accepts(value), name).toBe(true)
  })
})

describe('new ChatServiceClient: options taken without zod are exactly those the schema takes', () => {
  const keys = Object.keys(OPTIONS)
  const optionObject = fc.dictionary(fc.constantFrom(...keys, 'tiemout', '__proto__'), edgeValue, { maxKeys: 4 })

  it('whatever acceptedClientOptions takes, the schema takes, with the same output', () => {
    fc.assert(
      fc.property(optionObject, (options) => {
        const accepted = acceptedClientOptions(options)
        if (accepted === undefined) return
        const result = clientOptionsSchema().safeParse(options)
        expect(result.success).toBe(true)
        expect(accepted).toStrictEqual(result.data)
      }),
      { numRuns: 3_000 },
    )
  })

  it('refuses unusual option objects to the schema: non-enumerable, symbol and inherited keys, other prototypes', () => {
    const hidden = {}
    Object.defineProperty(hidden, 'timeout', { value: 'soon', enumerable: false })
    expect(acceptedClientOptions(hidden)).toBeUndefined()
    expect(clientOptionsSchema().safeParse(hidden).success).toBe(false)
    expect(acceptedClientOptions({ [Symbol('x')]: 1 })).toBeUndefined()
    expect(acceptedClientOptions(Object.create({ timeout: 5 }) as object)).toBeUndefined()
    expect(acceptedClientOptions(new URL('https://chat.example.com'))).toBeUndefined()
    expect(acceptedClientOptions(null)).toBeUndefined()
  })

  it('a bad option still fails with the schema’s issue, at its path', () => {
    let error: unknown
    try {
      new ChatServiceClient({ baseUrl: 'https://chat.example.com', keyId: 'k', keySecret: 'secret_12345678', timeout: 0 })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as RequestValidationError).issues).toEqual([expect.objectContaining({ path: ['timeout'], code: 'too_small' })])
  })
})
