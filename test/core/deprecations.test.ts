// Deprecations users on pinned versions see: the service's notice (`Deprecation`, RFC 9745;
// `Sunset`, RFC 8594; their `Link`s) logged once per operation per process at `warn`, redacted,
// and set on every call's trace; and the SDK's own deprecated options and methods (none today: a
// test-only row in the internal tables), warned once per process. The fake sends the notice from
// its option, `setDeprecation`, its control endpoint and `chat-service-fake --deprecation`.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { readFileSync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, TRACING_CHANNEL, type Logger, type RequestTrace } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type DeprecationHeaders, type FakeServerHandle } from 'chat-service-sdk/testing'
import { DEPRECATED_OPERATIONS, DEPRECATED_OPTIONS } from '../../src/internal/deprecated-api.ts'
import { forgetWarnedOnce } from '../../src/internal/warn-once.ts'
import { runCommand } from '../../src/testing/command.ts'
import { parseReport } from '../../scripts/release/api-report.ts'

const seed = generateDataset({ seed: 3, agents: 2, customerUsers: 3, conversations: 1, messages: 2 })
const key = seed.companies[0]?.keys[0]
if (key === undefined) throw new Error('no key')
const NOTICE: DeprecationHeaders = {
  deprecation: '@1688169599',
  sunset: 'Sun, 31 Jan 2027 23:59:59 GMT',
  link: `<https://docs.example.com/v2?token=${key.keySecret}>; rel="deprecation"; type="text/html", <https://docs.example.com/sunset>; rel=sunset`,
}

interface Logged {
  readonly level: string
  readonly message: string
  readonly fields: unknown
}

/** A logger that keeps what it is given. */
function recorder(): { logger: Logger; logged: Logged[] } {
  const logged: Logged[] = []
  const at =
    (level: string) =>
    (message: string, fields?: unknown): void => {
      logged.push({ level, message, fields })
    }
  return { logged, logger: { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') } }
}

const servers: FakeServerHandle[] = []
async function serve(deprecation: DeprecationHeaders | undefined): Promise<FakeServerHandle> {
  const server = await createFakeChatService({ seed, deprecation }).listen()
  servers.push(server)
  return server
}
const clientOf = (server: FakeServerHandle, logger: Logger, logLevel: 'warn' | 'off' = 'warn'): ChatServiceClient =>
  new ChatServiceClient({ ...server.clientOptions(), logger, logLevel, maxRetries: 0 })

// Each test starts as a new process would: nothing warned yet.
beforeEach(() => {
  forgetWarnedOnce()
})
afterEach(async () => {
  forgetWarnedOnce()
  DEPRECATED_OPTIONS.clear()
  DEPRECATED_OPERATIONS.clear()
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

describe("the service's deprecation notice", () => {
  it('is logged once per operation per process at warn: operation, dates, links, and no secret', async () => {
    const server = await serve(NOTICE)
    const first = recorder()
    await using client = clientOf(server, first.logger)
    await client.agents.list()
    await client.agents.list({ page: 2 })
    await client.conversations.list()
    expect(first.logged.map((entry) => entry.level)).toEqual(['warn', 'warn'])
    const [agents, conversations] = first.logged
    expect(agents?.message).toBe(
      'chat-service-sdk: the service marks agents.list (GET /rest/v1/agents) as deprecated since 2023-06-30T23:59:59.000Z; ' +
        'it may stop answering after 2027-01-31T23:59:59.000Z (Sunset); ' +
        'see https://docs.example.com/v2?token=[REDACTED] (deprecation), https://docs.example.com/sunset (sunset). ' +
        'Said once per operation per process; an SDK release that moves off it will say so in its CHANGELOG.',
    )
    expect(agents?.fields).toMatchObject({
      operation: 'agents.list',
      method: 'GET',
      path: '/rest/v1/agents',
      deprecation: '2023-06-30T23:59:59.000Z',
      sunset: '2027-01-31T23:59:59.000Z',
      links: [
        { rel: 'deprecation', href: 'https://docs.example.com/v2?token=[REDACTED]' },
        { rel: 'sunset', href: 'https://docs.example.com/sunset' },
      ],
    })
    expect(conversations?.message).toContain('conversations.list (GET /rest/v1/conversations)')
    expect(JSON.stringify(first.logged)).not.toContain(key.keySecret)

    // Another client of the same process: already said.
    const second = recorder()
    await using other = clientOf(server, second.logger)
    await other.agents.list()
    expect(second.logged).toEqual([])
  })

  it('a client that logs nothing does not use up the warning of the next one', async () => {
    const server = await serve(NOTICE)
    const silent = recorder()
    await using quiet = clientOf(server, silent.logger, 'off')
    await quiet.agents.list()
    const loud = recorder()
    await using client = clientOf(server, loud.logger)
    await client.agents.list()
    expect(silent.logged).toEqual([])
    expect(loud.logged).toHaveLength(1)
  })

  it('is set on the trace of every call that gets it, dates as Dates', async () => {
    const server = await serve(NOTICE)
    const seen: RequestTrace['deprecation'][] = []
    const onEnd = (message: unknown): void => {
      seen.push((message as RequestTrace).deprecation)
    }
    subscribe(`tracing:${TRACING_CHANNEL}:asyncEnd`, onEnd)
    try {
      await using client = clientOf(server, recorder().logger)
      await client.agents.list()
      await client.agents.list()
    } finally {
      unsubscribe(`tracing:${TRACING_CHANNEL}:asyncEnd`, onEnd)
    }
    expect(seen).toHaveLength(2)
    for (const notice of seen) {
      expect(notice?.deprecatedAt).toEqual(new Date(1688169599_000))
      expect(notice?.sunsetAt).toEqual(new Date('2027-01-31T23:59:59Z'))
      expect(notice?.headers).toEqual({ deprecation: '@1688169599', sunset: NOTICE.sunset })
      expect(notice?.links.map((link) => link.rel)).toEqual(['deprecation', 'sunset'])
      expect(JSON.stringify(notice)).not.toContain(key.keySecret)
    }
  })

  // Every response is read for it as it arrives (transport.ts, intake): also one the call then throws
  // for, whichever part of the SDK decides to (a 429 is the rate limit's to judge, any other status
  // the retry policy's; `totalTimeout` and `rateLimitPause` end a call before a wait).
  it.each([
    ['a 429 asking to wait 120 s (over the 60 s the SDK waits)', 429, '120', {}, { name: 'RateLimitError', retryAfterMs: 120_000 }],
    ['a 503 asking to wait 120 s', 503, '120', {}, { status: 503, retryAfterMs: 120_000 }],
    ['a 503 asking to wait past totalTimeout', 503, '30', { totalTimeout: 2_000 }, { name: 'APITimeoutError' }],
    ['a 429 whose pause would pass totalTimeout', 429, '30', { totalTimeout: 2_000 }, { name: 'APITimeoutError' }],
    ["a 429 under rateLimitPause: 'fail'", 429, '30', { rateLimitPause: 'fail' }, { name: 'RateLimitError' }],
  ] as const)('%s: thrown, and its notice still logged and traced', async (_what, status, retryAfter, options, thrown) => {
    const fake = createFakeChatService({ seed, deprecation: NOTICE })
    const server = await fake.listen()
    servers.push(server)
    fake.failNext(1, { status, headers: { 'retry-after': retryAfter } })
    const seen: RequestTrace['deprecation'][] = []
    const onEnd = (message: unknown): void => {
      seen.push((message as RequestTrace).deprecation)
    }
    const { logger, logged } = recorder()
    subscribe(`tracing:${TRACING_CHANNEL}:error`, onEnd)
    try {
      await using client = new ChatServiceClient({ ...server.clientOptions(), logger, logLevel: 'warn', maxRetries: 1, ...options })
      await expect(client.agents.list()).rejects.toMatchObject(thrown)
    } finally {
      unsubscribe(`tracing:${TRACING_CHANNEL}:error`, onEnd)
    }
    const warned = logged.filter((entry) => entry.level === 'warn' && entry.message.includes('as deprecated'))
    expect(warned).toHaveLength(1)
    expect(warned[0]?.message).toContain('agents.list (GET /rest/v1/agents) as deprecated since 2023-06-30T23:59:59.000Z')
    expect(seen).toHaveLength(1)
    expect(seen[0]?.sunsetAt).toEqual(new Date('2027-01-31T23:59:59Z'))
    expect(JSON.stringify(logged)).not.toContain(key.keySecret)
  })

  it('a value that is not a date is kept as sent and the call still succeeds; no notice, no log', async () => {
    const odd = await serve({ deprecation: 'true' })
    const { logger, logged } = recorder()
    await using client = clientOf(odd, logger)
    const page = await client.agents.list()
    expect(page.data).toHaveLength(2)
    expect(logged.map((entry) => entry.message)).toEqual([
      'chat-service-sdk: the service marks agents.list (GET /rest/v1/agents) as deprecated (Deprecation: true). ' +
        'Said once per operation per process; an SDK release that moves off it will say so in its CHANGELOG.',
    ])
    const plain = await serve(undefined)
    await using other = clientOf(plain, logger)
    await other.conversations.list()
    expect(logged).toHaveLength(1)
  })

  it('the fake: setDeprecation, POST and DELETE /__fake/deprecation, reset() back to the option', async () => {
    const fake = createFakeChatService({ seed, deprecation: { sunset: 'Sun, 31 Jan 2027 23:59:59 GMT' } })
    const server = await fake.listen()
    servers.push(server)
    const get = async (): Promise<Headers> => (await fetch(`${server.url}/rest/v1/agents`)).headers
    expect((await get()).get('sunset')).toBe('Sun, 31 Jan 2027 23:59:59 GMT')
    fake.setDeprecation({ deprecation: '@1', link: '<https://x.example>; rel="deprecation"' })
    expect([(await get()).get('deprecation'), (await get()).get('link'), (await get()).get('sunset')]).toEqual([
      '@1',
      '<https://x.example>; rel="deprecation"',
      null,
    ])
    const del = await fetch(`${server.url}/__fake/deprecation`, { method: 'DELETE' })
    expect(del.status).toBe(204)
    expect((await get()).get('deprecation')).toBeNull()
    const post = (body: unknown): Promise<Response> =>
      fetch(`${server.url}/__fake/deprecation`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    expect((await post({ deprecation: '@2' })).status).toBe(204)
    expect((await get()).get('deprecation')).toBe('@2')
    const refused = await post({ deprecation: 2 })
    expect(refused.status).toBe(400)
    expect(await refused.text()).toContain('deprecation must be a string')
    fake.reset()
    expect([(await get()).get('deprecation'), (await get()).get('sunset')]).toEqual([null, 'Sun, 31 Jan 2027 23:59:59 GMT'])
  })

  it('chat-service-fake --deprecation, --sunset and --deprecation-link', async () => {
    const result = await runCommand(
      [
        '--port',
        '0',
        '--json',
        '--deprecation',
        '@1688169599',
        '--sunset',
        'Sun, 31 Jan 2027 23:59:59 GMT',
        '--deprecation-link',
        '<https://d.example>; rel="deprecation"',
      ],
      { out: () => undefined, err: () => undefined },
    )
    if (!('server' in result)) throw new Error(`exit ${result.exitCode}`)
    servers.push(result.server)
    const { headers } = await fetch(`${result.server.url}/rest/v1/agents`)
    expect([headers.get('deprecation'), headers.get('sunset'), headers.get('link')]).toEqual([
      '@1688169599',
      'Sun, 31 Jan 2027 23:59:59 GMT',
      '<https://d.example>; rel="deprecation"',
    ])
  })
})

describe("the SDK's own deprecations (a test-only row: nothing is deprecated today)", () => {
  it('a deprecated option warns once per process, from the client, withOptions or a call', async () => {
    DEPRECATED_OPTIONS.set('compression', { api: 'ClientOptions.compression', since: '0.4.0', instead: 'responses are always compressed' })
    const server = await serve(undefined)
    const { logger, logged } = recorder()
    await using client = new ChatServiceClient({ ...server.clientOptions(), logger, compression: false })
    await using again = new ChatServiceClient({ ...server.clientOptions(), logger, compression: true })
    await using derived = again.withOptions({ compression: false })
    await derived.agents.list()
    expect(logged).toEqual([
      {
        level: 'warn',
        message:
          'chat-service-sdk: ClientOptions.compression is deprecated since 0.4.0 and will be removed in a later release: responses are always compressed',
        fields: { api: 'ClientOptions.compression', since: '0.4.0' },
      },
    ])
    expect(client.keyId).toBe(key.keyId)
  })

  it('a deprecated per-call option and a deprecated method warn once each', async () => {
    DEPRECATED_OPTIONS.set('maxRetries', { api: 'RequestOptions.maxRetries', since: '0.4.0', instead: 'use totalTimeout' })
    DEPRECATED_OPERATIONS.set('agents.list', { api: 'Agents.list', since: '0.4.0', instead: 'use agents.all()' })
    const server = await serve(undefined)
    const { logger, logged } = recorder()
    await using client = new ChatServiceClient({ ...server.clientOptions(), logger })
    await client.agents.list({}, { maxRetries: 1 })
    await client.agents.list({}, { maxRetries: 1 })
    await client.conversations.list({}, { maxRetries: 1 })
    await client.conversations.list()
    expect(logged.map((entry) => (entry.fields as { api: string }).api)).toEqual(['Agents.list', 'RequestOptions.maxRetries'])
  })

  it('every row of the tables is @deprecated in the API report, and every @deprecated item of the report has a row', () => {
    const report = parseReport(readFileSync(new URL('../../api/chat-service-sdk.api.md', import.meta.url), 'utf8'))
    const deprecatedInReport = [...report.values()].filter((item) => item.deprecated).map((item) => item.key)
    const rows = [...DEPRECATED_OPTIONS.values(), ...DEPRECATED_OPERATIONS.values()].map((row) => row.api)
    expect(rows.filter((api) => !deprecatedInReport.includes(api))).toEqual([])
    expect(deprecatedInReport.filter((api) => !rows.includes(api))).toEqual([])
  })
})
