/**
 * No secret anywhere, whatever the server sends (issue 19). A hostile (or merely careless) server
 * echoes the key secret and the chat tokens the client issued where the SDK copies text from a
 * response: the `x-request-id` header (→ `requestId`, messages, String, stack, JSON, traces, logs),
 * other headers and their names, bodies cut at the 64 KiB cap with a secret straddling the cut, a
 * token-issuance 200 cut short, and secrets echoed percent-encoded, form-encoded, JSON-escaped
 * (once, twice, ASCII-only), HTML-escaped, as UTF-8 read as Latin-1, or in pieces. None of it may
 * show in anything the SDK hands out; pieces shorter than 8 characters (MIN_FRAGMENT_LENGTH) may.
 */
import { tracingChannel } from 'node:diagnostics_channel'
import { inspect } from 'node:util'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  APIError,
  ChatServiceClient,
  ChatServiceError,
  InternalServerError,
  NotFoundError,
  ResponseValidationError,
  TRACING_CHANNEL,
  type RequestTrace,
} from 'chat-service-sdk'
import { KEY_ID, agent, pagination, tokenResponse } from '../helpers/fixtures.ts'
import { recordingLogger, rejection, until, type RecordingLogger } from '../helpers/loopback.ts'
import { json, response, startHostileServer, type HostileServer, type RawResponder, useProcessGuard } from './hostile-server.ts'

/** A key secret with every character that an encoding changes: `"` `\` `+` `/` `=` space `%` `&`, non-ASCII and astral. */
const SECRET = 'ks_live_Q9"vX3\\mR7+pL2/wT8=nB5 cY1%41&amp;€ü😀~'
/** A plain one, for the cases where only the position matters. */
const PLAIN = 'ks_live_Q9vX3mR7pL2wT8nB5cY1dF6gH0'
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJleHQtNDIiLCJub25jZSI6IjdmM2EifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg'

/** The shortest piece of a secret that is scrubbed (docs/reliability.md, "Secrets"). */
const MIN_FRAGMENT = 8
const ERROR_BODY_CAP = 64 * 1024

let server: HostileServer
// Around each test, after this file's own hooks: no uncaught error, unhandled rejection or pollution.
useProcessGuard()
const clients: ChatServiceClient[] = []
const traces: RequestTrace[] = []
const subscribers = {
  start: (context: RequestTrace) => traces.push(context),
  end: () => undefined,
  asyncStart: () => undefined,
  asyncEnd: () => undefined,
  error: () => undefined,
}
const channel = tracingChannel<unknown, RequestTrace>(TRACING_CHANNEL)

beforeAll(async () => {
  server = await startHostileServer()
  channel.subscribe(subscribers)
})
afterAll(async () => {
  channel.unsubscribe(subscribers)
  await server.close()
})
beforeEach(() => {
  server.clear()
  traces.length = 0
})
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()))
  await until(() => server.open === 0)
})

function makeClient(keySecret: string, respond: RawResponder): { client: ChatServiceClient; logger: RecordingLogger } {
  server.respond(respond)
  const logger = recordingLogger()
  const client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret, maxRetries: 0, logger, logLevel: 'debug' })
  clients.push(client)
  return { client, logger }
}

/** `JSON.stringify` typed as it behaves: `undefined` for `undefined`. */
const maybeJson = (value: unknown): string | undefined => JSON.stringify(value)
const stringify = (value: unknown): string => maybeJson(value) ?? ''

/** Every way a user might render a value (an error, a result, `response`) for a log or a ticket. */
function renderings(value: unknown): Record<string, string> {
  const out: Record<string, string> = {
    'String()': String(value),
    'util.inspect()': inspect(value),
    'util.inspect(showHidden, depth ∞)': inspect(value, { showHidden: true, depth: Infinity }),
    'JSON.stringify()': stringify(value),
  }
  if (value instanceof Error) {
    out['message'] = value.message
    out['stack'] = value.stack ?? ''
    const fields = value as Error & { requestId?: unknown; body?: unknown; headers?: unknown; path?: unknown }
    out['requestId'] = String(fields.requestId)
    out['body'] = stringify(fields.body)
    out['headers'] = stringify(fields.headers)
  }
  return out
}

/** The forms a secret can be shown in, raw or decoded from what the server sent. */
function formsOf(secret: string): string[] {
  return [
    ...new Set([
      secret,
      encodeURIComponent(secret),
      new URLSearchParams({ s: secret }).toString().slice(2),
      JSON.stringify(secret).slice(1, -1),
      asciiJson(secret),
      Buffer.from(secret).toString('latin1'),
      secret.toLowerCase(),
    ]),
  ]
}

/** Python's `json.dumps` (ensure_ascii): every non-ASCII character as `\uXXXX`. */
function asciiJson(text: string): string {
  return JSON.stringify(text)
    .slice(1, -1)
    .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/**
 * Fails when `text` shows `secret` (any form) or a piece of it at least MIN_FRAGMENT characters
 * long from either end (a cut shows the start of a secret; a server may print its end).
 */
function expectNoSecret(text: string, secret: string, where: string): void {
  for (const form of formsOf(secret)) {
    expect(text, `${where} shows a secret`).not.toContain(form)
    for (const piece of [form.slice(0, MIN_FRAGMENT), form.slice(-MIN_FRAGMENT)]) {
      expect(text, `${where} shows ${JSON.stringify(piece)} of a secret`).not.toContain(piece)
    }
  }
}

function expectHidden(value: unknown, ...secrets: string[]): void {
  for (const [how, text] of Object.entries(renderings(value))) for (const secret of secrets) expectNoSecret(text, secret, how)
}

function expectLogsAndTracesHidden(logger: RecordingLogger, ...secrets: string[]): void {
  const logs = logger.calls.map((call) => `${inspect(call.args, { depth: Infinity })} ${JSON.stringify(call.args)}`).join('\n')
  const traced = traces.map((trace) => `${inspect(trace, { depth: Infinity, showHidden: true })} ${JSON.stringify(trace)}`).join('\n')
  for (const secret of secrets) {
    expectNoSecret(logs, secret, 'the logs')
    expectNoSecret(traced, secret, 'the traces')
  }
}

const agentsPage = (): Record<string, unknown> => ({ data: [agent(1)], pagination: pagination(1, 20, 1) })

describe('x-request-id (and every other header) echoing a secret', () => {
  // How a server or proxy might echo the secret into a header (headers are Latin-1: the UTF-8
  // bytes of a non-ASCII secret arrive as Latin-1 text).
  const echoes: [string, (secret: string) => string][] = [
    ['as UTF-8 bytes', (s) => Buffer.from(s).toString('latin1')],
    ['percent-encoded', (s) => encodeURIComponent(s)],
    ['form-encoded', (s) => new URLSearchParams({ s }).toString().slice(2)],
    ['JSON-escaped, ASCII only', (s) => asciiJson(s)],
    ['its first 20 characters, then "…"', (s) => `${Buffer.from(s.slice(0, 20)).toString('latin1')}...`],
    ['its last 12 characters', (s) => Buffer.from(s.slice(-12)).toString('latin1')],
  ]

  it.each(echoes)('a success: response.requestId, response.headers, traces and logs do not show it (%s)', async (_how, echo) => {
    const { client, logger } = makeClient(SECRET, () =>
      json(200, agentsPage(), { 'x-request-id': `req-${echo(SECRET)}`, 'x-echo': echo(SECRET), [`x-${encodeURIComponent(PLAIN)}`]: '1' }),
    )
    const { data, response: meta } = await client.agents.list().withResponse()
    expect(data.data).toHaveLength(1)
    expect(meta.requestId).toMatch(/^req-/)
    expectHidden(meta, SECRET)
    expectHidden(data.response, SECRET)
    expectLogsAndTracesHidden(logger, SECRET)
  })

  it.each(echoes)('an error: requestId, message, String, stack, JSON, inspect, traces and logs do not show it (%s)', async (_how, echo) => {
    const { client, logger } = makeClient(SECRET, () =>
      json(404, { error: 'not found' }, { 'x-request-id': echo(SECRET), 'x-echo': echo(SECRET) }),
    )
    const error = await rejection(client.customerUsers.update('cu-1', { name: 'n' }))
    expect(error).toBeInstanceOf(NotFoundError)
    expect((error as NotFoundError).requestId).toContain('[REDACTED]')
    expectHidden(error, SECRET)
    expectLogsAndTracesHidden(logger, SECRET)
  })

  it('a header NAME holding the secret (undici lower-cases it) is scrubbed too', async () => {
    const { client } = makeClient(PLAIN, () => json(200, agentsPage(), { [`x-${PLAIN}`]: 'a', 'x-request-id': 'req-1' }))
    const { response: meta } = await client.agents.list().withResponse()
    expect(meta.requestId).toBe('req-1')
    expectHidden(meta, PLAIN)
  })

  it('an issued token echoed in the x-request-id of the very response that issues it', async () => {
    const { client, logger } = makeClient(PLAIN, () => json(200, tokenResponse(TOKEN), { 'x-request-id': TOKEN }))
    const { data, response: meta } = await client.auth.issueToken({ userId: 'ext-42' }).withResponse()
    expect(data.token).toBe(TOKEN) // the token itself is the result: yours
    expect(meta.requestId).toBe('[REDACTED]')
    expectHidden(meta, TOKEN)
    expectLogsAndTracesHidden(logger, TOKEN)
  })

  it('an issued token echoed in a later response header and error body, in any form', async () => {
    const { client, logger } = makeClient(PLAIN, (request) =>
      request.method === 'POST'
        ? json(200, tokenResponse(TOKEN))
        : json(500, { error: `bad token ${asciiJson(TOKEN)}`, echo: encodeURIComponent(TOKEN) }, { 'x-request-id': TOKEN.slice(0, 30) }),
    )
    await client.auth.issueToken({ userId: 'ext-42' })
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(InternalServerError)
    expectHidden(error, TOKEN, PLAIN)
    expectLogsAndTracesHidden(logger, TOKEN, PLAIN)
  })
})

describe('headers scrubbed when shown, not when received (issue 32)', () => {
  // Since 0.4 a response's headers are scrubbed when something shows them (response.headers,
  // requestId, an error, a trace), not on arrival: every way to reach them must still scrub.
  const echoing = (status: number, body: unknown = agentsPage(), extra: Record<string, string> = {}): Buffer =>
    json(status, body, { 'x-request-id': `req-${encodeURIComponent(PLAIN)}`, 'x-echo': PLAIN, [`x-${PLAIN}`]: 'name', ...extra })

  it('a spread copy, structuredClone, Object.entries, inspect before any read, and the page as JSON: none shows it', async () => {
    const { client } = makeClient(PLAIN, () => echoing(200))
    const page = await client.agents.list()
    const meta = page.response
    // Nothing has read the headers yet: each of these is the first to reach them.
    expectHidden(inspect(meta, { showHidden: true, depth: Infinity }), PLAIN)
    expectHidden({ ...meta }, PLAIN)
    expectHidden(structuredClone(meta), PLAIN)
    expectHidden(Object.entries(meta), PLAIN)
    expectHidden(JSON.parse(JSON.stringify(page)) as unknown, PLAIN)
    expectHidden(page, PLAIN)
    // Read afterwards: scrubbed, and the same every time.
    expect(meta.headers['x-echo']).toBe('[REDACTED]')
    expect(meta.headers['x-[REDACTED]']).toBe('name')
    expect(meta.requestId).toBe('req-[REDACTED]')
    expect(meta.headers['x-request-id']).toBe(meta.requestId)
    expect(meta.headers).toBe(meta.headers)
    expect(JSON.parse(JSON.stringify(meta))).toEqual({ status: 200, headers: meta.headers, requestId: 'req-[REDACTED]' })
  })

  it('requestId read before the headers is the scrubbed value the headers then show', async () => {
    const { client } = makeClient(PLAIN, () => echoing(200))
    const { response: meta } = await client.agents.list().withResponse()
    expect(meta.requestId).toBe('req-[REDACTED]')
    expect(meta.headers['x-request-id']).toBe('req-[REDACTED]')
    expectHidden(meta, PLAIN)
  })

  it("the 429 a paused client's refusal keeps (rateLimitPause: 'fail'), and the 429 itself", async () => {
    const { client, logger } = makeClient(PLAIN, () => echoing(429, { error: 'slow down' }, { 'retry-after': '30' }))
    const first = await rejection(client.agents.list())
    const refused = await rejection(client.withOptions({ rateLimitPause: 'fail' }).agents.list())
    expect(server.requests).toHaveLength(1) // the second call was refused before it was sent
    for (const error of [first, refused]) {
      expect((error as APIError).status).toBe(429)
      expect((error as APIError).requestId).toBe('req-[REDACTED]')
      expect((error as APIError).headers['x-echo']).toBe('[REDACTED]')
      expectHidden(error, PLAIN)
    }
    expectLogsAndTracesHidden(logger, PLAIN)
  })

  it('a success over maxResponseBytes (its body never kept): the error shows the headers scrubbed', async () => {
    const { client, logger } = makeClient(PLAIN, () => echoing(200))
    const error = await rejection(client.withOptions({ maxResponseBytes: 16 }).agents.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).requestId).toBe('req-[REDACTED]')
    expectHidden(error, PLAIN)
    expectLogsAndTracesHidden(logger, PLAIN)
  })

  it('a retried call: every attempt logged, the trace of the last one, the result', async () => {
    let calls = 0
    server.respond(() => (calls++ === 0 ? echoing(503, { error: 'busy' }, { 'retry-after': '0' }) : echoing(200)))
    const logger = recordingLogger()
    const client = new ChatServiceClient({
      baseUrl: server.origin,
      keyId: KEY_ID,
      keySecret: PLAIN,
      maxRetries: 1,
      logger,
      logLevel: 'debug',
    })
    clients.push(client)
    const { response: meta } = await client.agents.list().withResponse()
    expect(calls).toBe(2)
    expect(traces.at(-1)?.requestId).toBe('req-[REDACTED]')
    expect(traces.at(-1)?.attempts).toBe(2)
    expectHidden(meta, PLAIN)
    expectLogsAndTracesHidden(logger, PLAIN)
  })
})

describe('secrets cut by the 64 KiB error-body cap', () => {
  // The cap keeps the first 64 KiB of an error body: a secret echoed across that line is cut.
  const straddles = [MIN_FRAGMENT, 9, 13, 20, 30, PLAIN.length - 1]

  it.each(straddles)('%i characters of the key secret before the cut: none of them shows', async (kept) => {
    const body = `${'x'.repeat(ERROR_BODY_CAP - kept)}${PLAIN} and more after the cut`
    const { client } = makeClient(PLAIN, () => response(500, { 'content-type': 'text/plain' }, body))
    const error = (await rejection(client.agents.list())) as InternalServerError
    expect(error).toBeInstanceOf(InternalServerError)
    expect(error.body).toMatch(/^x+\[REDACTED\]… \[cut off after 65536 bytes\]$/)
    expectHidden(error, PLAIN)
  })

  it('fewer than 8 characters before the cut may show: at most 7, the documented bound', async () => {
    const kept = MIN_FRAGMENT - 1
    const body = `${'x'.repeat(ERROR_BODY_CAP - kept)}${PLAIN}`
    const { client } = makeClient(PLAIN, () => response(500, { 'content-type': 'text/plain' }, body))
    const error = (await rejection(client.agents.list())) as InternalServerError
    expect(error.body).toBe(`${'x'.repeat(ERROR_BODY_CAP - kept)}${PLAIN.slice(0, kept)}… [cut off after 65536 bytes]`)
  })

  const encodings: [string, (text: string) => string, (text: string) => string][] = [
    ['JSON-escaped', (text) => JSON.stringify(text).slice(1, -1), (text) => JSON.parse(`"${text}"`) as string],
    ['percent-encoded', encodeURIComponent, decodeURIComponent],
    ['as UTF-8, the cut splitting a multi-byte character', (text) => text, (text) => text.replace(/\uFFFD$/, '')],
  ]

  it.each(encodings)(
    'a secret with quote, backslash, plus, slash, space, percent, ampersand and non-ASCII, %s, cut anywhere: no 8 of its characters in a row show',
    async (_how, encode, decode) => {
      const encoded = Buffer.from(encode(SECRET))
      const { client } = makeClient(SECRET, () => response(404, {}, ''))
      for (let kept = MIN_FRAGMENT; kept < encoded.length; kept++) {
        const body = Buffer.concat([Buffer.from(`{"error":"${'x'.repeat(ERROR_BODY_CAP - 10 - kept)}`), encoded, Buffer.from('"}')])
        server.respond(() => response(500, { 'content-type': 'application/json' }, body))
        const error = await rejection(client.agents.list())
        expect(error).toBeInstanceOf(InternalServerError)
        const text = (error as APIError).body as string
        // The characters of the secret the cut kept: the longest prefix of what was kept that decodes.
        const keptBytes = encoded.subarray(0, kept).toString('utf8')
        let characters = ''
        for (let end = keptBytes.length; end > 0 && characters === ''; end--) {
          try {
            characters = decode(keptBytes.slice(0, end))
          } catch {
            // an escape cut in the middle: try one character less
          }
        }
        const piece = characters.slice(-MIN_FRAGMENT)
        if (piece.length === MIN_FRAGMENT) {
          expect(text, `kept ${kept}`).not.toContain(encode(piece))
          expect(text, `kept ${kept}`).not.toContain(piece)
        }
        expectHidden(error, SECRET)
      }
    },
    // ~100 calls with 64 KiB bodies each: 7.7-11.8 s in CI runs with coverage on this 2-core machine,
    // near vitest's 20 s once it was loaded besides. The bound is for a hang.
    60_000,
  )
})

describe('a token-issuance 200 that does not parse', () => {
  const cuts: [string, string][] = [
    ['cut inside the token', `{"token":"${TOKEN.slice(0, 60)}`],
    ['cut after the token', `{"token":"${TOKEN}","user":{"id":"cu-1"`],
    ['cut inside an escaped token', `{"token":"${TOKEN.slice(0, 20)}\\u002e${TOKEN.slice(21, 50)}`],
    ['not JSON: single quotes', `{'token': '${TOKEN}', 'user': None}`],
    ['not JSON: form-encoded', `token=${encodeURIComponent(TOKEN)}&user=cu-1`],
    ['JSON inside a JSON string, cut', `"{\\"token\\":\\"${TOKEN.slice(0, 70)}`],
  ]

  it.each(cuts)('%s: ResponseValidationError keeps the body without the token', async (_how, body) => {
    const { client, logger } = makeClient(PLAIN, () =>
      response(200, { 'content-type': 'application/json', 'x-request-id': 'req-cut' }, body),
    )
    const error = await rejection(client.auth.issueToken({ userId: 'ext-42' }))
    expect(error).toBeInstanceOf(ResponseValidationError)
    const rve = error as ResponseValidationError
    expect(rve.status).toBe(200)
    expect(rve.requestId).toBe('req-cut')
    expect(typeof rve.body).toBe('string')
    expect(rve.body).toContain('[REDACTED]')
    expectHidden(error, TOKEN.slice(0, Math.min(TOKEN.length, 50)))
    expectLogsAndTracesHidden(logger, TOKEN.slice(0, 50))
  })

  it('the token of a cut-short issuance is scrubbed from later errors too', async () => {
    let cut = true
    const { client } = makeClient(PLAIN, (request) => {
      if (request.method === 'POST' && cut) {
        cut = false
        return response(200, { 'content-type': 'application/json' }, `{"token":"${TOKEN}","user":`)
      }
      return json(404, { error: `unknown token ${TOKEN}` }, { 'x-request-id': TOKEN })
    })
    await rejection(client.auth.issueToken({ userId: 'ext-42' }))
    const error = await rejection(client.customerUsers.update('cu-1', { name: 'n' }))
    expect(error).toBeInstanceOf(NotFoundError)
    expectHidden(error, TOKEN)
  })
})

describe('secrets echoed escaped in bodies', () => {
  const bodies: [string, (secret: string) => Buffer][] = [
    [
      'a text body holding the JSON-escaped request',
      (s) => response(400, { 'content-type': 'text/plain' }, `bad request: {"keySecret":${JSON.stringify(s)}}`),
    ],
    ['a JSON body holding the request as a JSON string (escaped twice)', (s) => json(400, { error: JSON.stringify({ keySecret: s }) })],
    [
      'a JSON body escaped ASCII-only (Python)',
      (s) => response(400, { 'content-type': 'application/json' }, `{"error": "key \\"${asciiJson(s)}\\" refused"}`),
    ],
    [
      'an HTML error page',
      (s) =>
        response(
          400,
          { 'content-type': 'text/html' },
          `<p>key &quot;${s.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}&quot; refused</p>`,
        ),
    ],
    ['a JSON key', (s) => json(400, { [s]: 'refused', [encodeURIComponent(s)]: 'refused' })],
    [
      'a body starting with the end of the secret (the server cut it)',
      (s) => response(400, { 'content-type': 'text/plain' }, `…${s.slice(-14)} refused`),
    ],
  ]

  it.each(bodies)('%s', async (_how, reply) => {
    const { client, logger } = makeClient(SECRET, () => reply(SECRET))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(APIError)
    expectHidden(error, SECRET)
    expectLogsAndTracesHidden(logger, SECRET)
  })

  it('text around a secret is kept: only the secret is replaced', async () => {
    const { client } = makeClient(SECRET, () => response(400, { 'content-type': 'text/plain' }, `before ${JSON.stringify(SECRET)} after`))
    const error = (await rejection(client.agents.list())) as APIError
    expect(error.body).toBe('before "[REDACTED]" after')
    expect(error.message).toContain('before "[REDACTED]" after')
  })
})

describe('a client that issued many tokens', () => {
  // Beyond 16 anchors the redactor hashes the text instead of searching each secret, and beyond
  // 1,024 tokens it forgets the oldest: both must keep every remembered token scrubbed.
  const ISSUED = 1_030
  const tokenNumber = (n: number): string =>
    `${TOKEN.slice(0, 40)}${String(n).padStart(5, '0')}.${(n * 7919).toString(36).padStart(12, 'q')}`

  it(`after ${ISSUED} issued tokens (the oldest 6 forgotten), the last 1,024 are scrubbed in every form, whole or cut`, async () => {
    let issued = 0
    const { client, logger } = makeClient(PLAIN, (request) => {
      if (request.method === 'POST') return json(200, tokenResponse(tokenNumber(issued++)))
      const echoed = [6, 500, ISSUED - 1].map(tokenNumber)
      return json(
        500,
        { error: `tokens ${asciiJson(echoed[0] ?? '')} and ${encodeURIComponent(echoed[1] ?? '')}`, cut: (echoed[2] ?? '').slice(0, 50) },
        { 'x-request-id': echoed[2] ?? '' },
      )
    })
    for (let batch = 0; batch < ISSUED; batch += 103) {
      await Promise.all(
        Array.from({ length: Math.min(103, ISSUED - batch) }, (_, i) => client.auth.issueToken({ userId: `ext-${batch + i}` })),
      )
    }
    expect(issued).toBe(ISSUED)
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(InternalServerError)
    expectHidden(error, ...[6, 500, ISSUED - 1].map(tokenNumber))
    expectLogsAndTracesHidden(logger, ...[6, 500, ISSUED - 1].map(tokenNumber))
    expect((error as InternalServerError).requestId).toBe('[REDACTED]')
  })
})

describe('malformed escapes around a secret', () => {
  it('are kept as they came and do not hide the secret next to them', async () => {
    const noise = '%ZZ %E2%82 %ED%A0%80 %C0%AF &#0; &#x110000; &bogus; \\u12 \\x4 \\q %'
    const { client } = makeClient(SECRET, () =>
      response(400, { 'content-type': 'text/plain' }, `${noise}${encodeURIComponent(SECRET)}${noise}`),
    )
    const error = (await rejection(client.agents.list())) as APIError
    expect(error.body).toBe(`${noise}[REDACTED]${noise}`)
    expectHidden(error, SECRET)
  })
})

it('everything thrown above is a ChatServiceError, and the client keeps working', async () => {
  const { client } = makeClient(PLAIN, () => response(200, { 'content-type': 'application/json', 'x-request-id': PLAIN }, '{"data":'))
  const error = await rejection(client.agents.list())
  expect(error).toBeInstanceOf(ChatServiceError)
  expectHidden(error, PLAIN)
  server.respond(() => json(200, agentsPage()))
  expect((await client.agents.list()).data).toHaveLength(1)
})
