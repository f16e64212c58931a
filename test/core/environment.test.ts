/**
 * The environment (0.2): `new ChatServiceClient()` reads CHAT_SERVICE_BASE_URL,
 * CHAT_SERVICE_KEY_ID and CHAT_SERVICE_KEY_SECRET; a value given in code wins; a missing one is a
 * RequestValidationError naming the option and its variable; an invalid CHAT_SERVICE_BASE_URL says
 * where it came from. Each test saves the CHAT_SERVICE_* variables, clears them, and puts them back.
 */
import { inspect } from 'node:util'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, NotFoundError, RequestValidationError } from 'chat-service-sdk'

const { ENVIRONMENT_VARIABLES } = ChatServiceClient
import { KEY_ID, KEY_SECRET, emptyListFor } from '../helpers/fixtures.ts'
import { rejection, recordingLogger, startLoopback, targetOf, type LoopbackServer } from '../helpers/loopback.ts'

const ENV_KEY_ID = 'env-key-id-3Fq'
const ENV_KEY_SECRET = 'ks_env_Zr8pW2mQ7tX4vL9nB1cY'

let server: LoopbackServer
let saved: Record<string, string | undefined>
const clients: ChatServiceClient[] = []

beforeAll(async () => {
  server = await startLoopback()
  server.respond((request) => ({ body: emptyListFor(targetOf(request).pathname) }))
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => {
  server.clear()
  saved = {}
  for (const name of Object.keys(process.env).filter((key) => key.startsWith('CHAT_SERVICE_'))) {
    saved[name] = process.env[name]
    Reflect.deleteProperty(process.env, name)
  }
  process.env.CHAT_SERVICE_LOG = 'off'
})
afterEach(async () => {
  for (const name of Object.keys(process.env).filter((key) => key.startsWith('CHAT_SERVICE_'))) Reflect.deleteProperty(process.env, name)
  Object.assign(process.env, saved)
  await Promise.all(clients.splice(0).map((c) => c.close()))
})

/** `new ChatServiceClient(options)`, closed after the test. */
function make(options?: ConstructorParameters<typeof ChatServiceClient>[0]): ChatServiceClient {
  const client = new ChatServiceClient(options)
  clients.push(client)
  return client
}

function constructionError(options?: ConstructorParameters<typeof ChatServiceClient>[0]): RequestValidationError {
  try {
    make(options)
  } catch (error) {
    expect(error).toBeInstanceOf(RequestValidationError)
    return error as RequestValidationError
  }
  throw new Error('Expected the constructor to throw')
}

function setEnvironment(values: Partial<Record<keyof typeof ENVIRONMENT_VARIABLES, string>>): void {
  for (const [option, value] of Object.entries(values)) {
    process.env[ENVIRONMENT_VARIABLES[option as keyof typeof ENVIRONMENT_VARIABLES]] = value
  }
}

describe('reading the environment', () => {
  it('names the three variables', () => {
    expect(ENVIRONMENT_VARIABLES).toStrictEqual({
      baseUrl: 'CHAT_SERVICE_BASE_URL',
      keyId: 'CHAT_SERVICE_KEY_ID',
      keySecret: 'CHAT_SERVICE_KEY_SECRET',
    })
  })

  it('new ChatServiceClient() with no options sends to CHAT_SERVICE_BASE_URL with the key pair of the environment', async () => {
    setEnvironment({ baseUrl: `${server.origin}/rest/v1/`, keyId: ENV_KEY_ID, keySecret: ENV_KEY_SECRET })
    const client = make()
    expect(client.baseUrl).toBe(`${server.origin}/rest/v1`)
    expect(client.keyId).toBe(ENV_KEY_ID)
    await client.agents.list()
    expect(server.arrivals).toHaveLength(1)
    expect(targetOf(server.arrivals[0]!).pathname).toBe('/rest/v1/agents')
    expect(JSON.parse(server.arrivals[0]!.body)).toStrictEqual({ keyId: ENV_KEY_ID, keySecret: ENV_KEY_SECRET })
  })

  it('new ChatServiceClient({}) reads the environment too', async () => {
    setEnvironment({ baseUrl: server.origin, keyId: ENV_KEY_ID, keySecret: ENV_KEY_SECRET })
    await make({}).agents.list()
    expect(JSON.parse(server.arrivals[0]!.body)).toStrictEqual({ keyId: ENV_KEY_ID, keySecret: ENV_KEY_SECRET })
  })

  it('a value given in code wins over its variable, one option at a time', async () => {
    setEnvironment({ baseUrl: 'http://127.0.0.1:9', keyId: ENV_KEY_ID, keySecret: ENV_KEY_SECRET })
    await make({ baseUrl: server.origin }).agents.list()
    await make({ baseUrl: new URL(server.origin), keyId: KEY_ID }).agents.list()
    await make({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET }).agents.list()
    expect(server.arrivals.map((arrival) => JSON.parse(arrival.body) as unknown)).toStrictEqual([
      { keyId: ENV_KEY_ID, keySecret: ENV_KEY_SECRET },
      { keyId: KEY_ID, keySecret: ENV_KEY_SECRET },
      { keyId: KEY_ID, keySecret: KEY_SECRET },
    ])
  })

  it('a key secret from the environment is redacted like one given in code', async () => {
    setEnvironment({ baseUrl: server.origin, keyId: ENV_KEY_ID, keySecret: ENV_KEY_SECRET })
    const client = make({ maxRetries: 0 })
    server.respond((request) => ({ status: 404, body: { error: `nothing for ${request.body}` } }))
    try {
      const error = await rejection(client.customerUsers.update(ENV_KEY_SECRET, { name: 'n' }))
      expect(error).toBeInstanceOf(NotFoundError)
      for (const text of [String(error), inspect(error, { showHidden: true, depth: 10 }), JSON.stringify(error), inspect(client)]) {
        expect(text).not.toContain(ENV_KEY_SECRET)
      }
    } finally {
      server.respond((request) => ({ body: emptyListFor(targetOf(request).pathname) }))
    }
  })

  it('a too-short CHAT_SERVICE_KEY_SECRET is warned about, naming the variable', () => {
    setEnvironment({ baseUrl: server.origin, keyId: ENV_KEY_ID, keySecret: 'ab' })
    const logger = recordingLogger()
    make({ logger, logLevel: 'warn' })
    const warnings = logger.messages('warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('CHAT_SERVICE_KEY_SECRET')
  })
})

describe('missing options', () => {
  it.each([
    ['baseUrl', 'CHAT_SERVICE_BASE_URL'],
    ['keyId', 'CHAT_SERVICE_KEY_ID'],
    ['keySecret', 'CHAT_SERVICE_KEY_SECRET'],
  ] as const)('missing %s (neither option nor %s) names both', (option, variable) => {
    const all = { baseUrl: server.origin, keyId: ENV_KEY_ID, keySecret: ENV_KEY_SECRET }
    setEnvironment(Object.fromEntries(Object.entries(all).filter(([name]) => name !== option)))
    const error = constructionError()
    expect(error.message).toContain(option)
    expect(error.message).toContain(variable)
    expect(error.issues.map((issue) => issue.path)).toStrictEqual([[option]])
    expect(error.message).not.toContain(ENV_KEY_SECRET)
  })

  it('all three missing: one error naming every option and every variable', () => {
    const error = constructionError()
    for (const [option, variable] of Object.entries(ENVIRONMENT_VARIABLES)) {
      expect(error.message).toContain(option)
      expect(error.message).toContain(variable)
    }
    expect(error.issues).toHaveLength(3)
  })

  it('a variable set to the empty string counts as missing', () => {
    setEnvironment({ baseUrl: server.origin, keyId: '', keySecret: ENV_KEY_SECRET })
    const error = constructionError()
    expect(error.message).toContain('keyId')
    expect(error.message).toContain('CHAT_SERVICE_KEY_ID')
  })
})

describe('an invalid CHAT_SERVICE_BASE_URL', () => {
  it.each([['not a url'], ['ftp://files.example.com'], ['https://chat.example.com/rest/v2'], ['https://chat.example.com/rest/v1/v1']])(
    '%s: the error says it came from CHAT_SERVICE_BASE_URL',
    (value) => {
      setEnvironment({ baseUrl: value, keyId: ENV_KEY_ID, keySecret: ENV_KEY_SECRET })
      const error = constructionError()
      expect(error.message).toContain('CHAT_SERVICE_BASE_URL')
      expect(error.issues[0]?.path).toStrictEqual(['baseUrl'])
    },
  )

  it('the same bad URL given in code does not blame the variable', () => {
    setEnvironment({ keyId: ENV_KEY_ID, keySecret: ENV_KEY_SECRET })
    const error = constructionError({ baseUrl: 'https://chat.example.com/rest/v2' })
    expect(error.message).toContain('v2')
    expect(error.message).not.toContain('CHAT_SERVICE_BASE_URL')
  })

  it('a valid baseUrl in code wins over an invalid variable', async () => {
    setEnvironment({ baseUrl: 'not a url', keyId: ENV_KEY_ID, keySecret: ENV_KEY_SECRET })
    await make({ baseUrl: server.origin }).agents.list()
    expect(server.arrivals).toHaveLength(1)
  })
})
