/**
 * The control endpoints of a listening fake: commands under `/__fake/` on the fake's own origin,
 * so that a process that cannot call the fake's methods (a service in docker-compose, another
 * language's test suite, a shell script) can steer it. Loopback peers only: the commands change
 * the data and reveal the request log, so no other host may send them (a fake listening on every
 * interface still serves the API to every peer).
 *
 * Every command is validated and refused with a clear 400 (`{ error: { status, message } }`, as
 * the service's errors); the commands are not service traffic, so they are not recorded, not
 * rate-limited, not delayed and never take a fault. TESTING.md, "Steering a listening fake", is
 * the users' guide.
 *
 * @module
 */
import { FakeDataError } from './changes.ts'
import type { FakeChatService } from './fake-service.ts'
import { MOVE_FIELDS } from './list-moves.ts'
import { errorResponse, isJsonContentType, jsonResponse, type FakeRequest, type FakeResponse } from './http.ts'
import { isPlainObject, type Json } from './router.ts'
import type { FaultSpec, RecordedRequest } from './types.ts'

/** Where the commands live. */
export const CONTROL_PREFIX = '/__fake'

/** Whether a request goes to the control endpoints (listen mode answers it before the service). */
export function isControlPath(path: string): boolean {
  return path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`)
}

/**
 * Whether a peer address (`req.socket.remoteAddress`) is loopback: `127.0.0.0/8`, `::1`, or an
 * IPv4-mapped `::ffff:127.x.x.x`. `undefined` (a socket already closed) is not.
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false
  const v4 = address.toLowerCase().replace(/^::ffff:/, '')
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)) return true
  return address === '::1' || address === '0:0:0:0:0:0:0:1'
}

/** Handles a request to the control endpoints. */
export type ControlHandler = (req: FakeRequest, peer: string | undefined) => FakeResponse

/** A command: what it needs from its body, what it does. */
interface Command {
  method: 'GET' | 'POST' | 'DELETE'
  path: string
  /** Members the body may have (a POST with a JSON object body); `undefined`: any (seed). */
  fields?: readonly string[]
  run: (body: Json) => FakeResponse
}

const noContent = (): FakeResponse => ({ status: 204, headers: {}, body: Buffer.alloc(0) })

/** Shown in secrets' place in `GET /__fake/requests`. */
export const REDACTED = '[redacted]'

/** Free-text replacement applies to known key secrets at least this long (a short one would garble the text). */
const MIN_SECRET_LENGTH = 8

/** Headers whose values are credentials whatever they hold. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key'])

/** The control endpoints of `fake` (its public methods, and `secrets()`: the key secrets it knows). */
export function createControl(fake: FakeChatService, secrets: () => Iterable<string>, recording: () => boolean): ControlHandler {
  const commands: Command[] = [
    {
      method: 'POST',
      path: '/faults',
      fields: ['n', 'fault'],
      run: (body) => {
        const n = body['n']
        if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new CommandError('n must be an integer of at least 1')
        fake.failNext(n, faultFromJson(body['fault']))
        return jsonResponse(200, { queued: n })
      },
    },
    {
      method: 'DELETE',
      path: '/faults',
      run: () => {
        fake.clearFaults()
        return noContent()
      },
    },
    {
      method: 'POST',
      path: '/seed',
      run: (body) => {
        fake.seed(body as never) // checked by seed(), which refuses a malformed seed with a message
        return jsonResponse(200, { companyIds: fake.companyIds() })
      },
    },
    {
      method: 'POST',
      path: '/append-messages',
      fields: ['companyId', 'conversationId', 'messages'],
      run: (body) => {
        const appended = fake.appendMessages(body['companyId'] as string, body['conversationId'] as string, body['messages'] as never)
        return jsonResponse(200, { data: appended })
      },
    },
    {
      method: 'POST',
      path: '/delete-message',
      fields: ['companyId', 'conversationId', 'messageId'],
      run: (body) => {
        fake.deleteMessage(body['companyId'] as string, body['conversationId'] as string, body['messageId'] as string)
        return noContent()
      },
    },
    {
      method: 'POST',
      path: '/delete-conversation',
      fields: ['companyId', 'conversationId'],
      run: (body) => {
        fake.deleteConversation(body['companyId'] as string, body['conversationId'] as string)
        return noContent()
      },
    },
    {
      method: 'POST',
      path: '/list-moves',
      fields: MOVE_FIELDS,
      run: (body) => {
        fake.moveList(body as never) // checked by moveList(), which refuses a malformed move with a message
        return jsonResponse(200, { scheduled: true })
      },
    },
    {
      method: 'DELETE',
      path: '/list-moves',
      run: () => {
        fake.clearListMoves()
        return noContent()
      },
    },
    {
      method: 'GET',
      path: '/requests',
      run: () => {
        const redact = redactor([...secrets()])
        return jsonResponse(200, { recording: recording(), data: fake.requests.map(redact) })
      },
    },
    {
      method: 'DELETE',
      path: '/requests',
      run: () => {
        fake.clearRequests()
        return noContent()
      },
    },
    {
      method: 'POST',
      path: '/deprecation',
      fields: ['deprecation', 'sunset', 'link'],
      run: (body) => {
        try {
          fake.setDeprecation(body) // each header checked by setDeprecation
        } catch (error) {
          throw new CommandError(error instanceof Error ? error.message : String(error))
        }
        return noContent()
      },
    },
    {
      method: 'DELETE',
      path: '/deprecation',
      run: () => {
        fake.setDeprecation(undefined)
        return noContent()
      },
    },
    {
      method: 'POST',
      path: '/reset',
      fields: [],
      run: () => {
        fake.reset()
        return noContent()
      },
    },
  ]
  const list = commands.map((c) => `${c.method} ${CONTROL_PREFIX}${c.path}`).join(', ')

  return (req, peer) => {
    if (!isLoopbackAddress(peer)) {
      return errorResponse(
        403,
        `The fake's control endpoints (${CONTROL_PREFIX}/...) accept loopback peers only; this request came from ${peer ?? 'an unknown address'}`,
      )
    }
    const path = req.path.slice(CONTROL_PREFIX.length)
    const matches = commands.filter((c) => c.path === path)
    if (matches.length === 0) return errorResponse(404, `No control endpoint ${req.path}; there are: ${list}`)
    const command = matches.find((c) => c.method === req.method)
    if (!command)
      return errorResponse(405, `Method ${req.method} not allowed on ${req.path}`, { allow: matches.map((c) => c.method).join(', ') })
    try {
      return command.run(command.method === 'POST' ? bodyOf(req, command.fields) : {})
    } catch (error) {
      if (error instanceof FakeDataError) return errorResponse(error.status, error.message)
      // Everything else a command throws is about its input: seed() and failNext() check theirs.
      if (error instanceof Error) return errorResponse(400, error.message)
      throw error
    }
  }
}

/** A command's input is wrong: 400 with this message. */
class CommandError extends Error {
  constructor(message: string) {
    super(`chat-service-sdk/testing: ${message}`)
  }
}

/** The JSON object body of a POST command, holding only `fields` (when given). */
function bodyOf(req: FakeRequest, fields: readonly string[] | undefined): Json {
  if (req.rawBody === undefined || req.rawBody === '') {
    if (fields !== undefined && fields.length === 0) return {}
    throw new CommandError(`${req.method} ${req.path} needs a JSON body`)
  }
  if (!isJsonContentType(req.headers['content-type'])) {
    throw new CommandError(
      `send the body of ${req.path} as JSON, with content-type: application/json (got ${req.headers['content-type'] ?? 'none'})`,
    )
  }
  let value: unknown
  try {
    value = JSON.parse(req.rawBody)
  } catch (error) {
    throw new CommandError(`the body of ${req.path} is not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (!isPlainObject(value)) throw new CommandError(`the body of ${req.path} must be a JSON object`)
  if (fields !== undefined) {
    const unknown = Object.keys(value).filter((name) => !fields.includes(name))
    if (unknown.length > 0) {
      throw new CommandError(
        `unknown member ${unknown.map((n) => JSON.stringify(n)).join(', ')} in the body of ${req.path} (it takes ${fields.join(', ') || 'nothing'})`,
      )
    }
  }
  return value
}

const FAULT_FIELDS = ['status', 'headers', 'body', 'bodyBase64', 'delayMs', 'bodyDelayMs', 'dropConnection', 'match']
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/**
 * A {@link FaultSpec} from JSON: as the type, except that a RegExp `match.path` is written
 * `{ "regexp": "...", "flags": "..." }` and a binary body `bodyBase64`.
 */
export function faultFromJson(value: unknown): FaultSpec {
  if (!isPlainObject(value)) throw new CommandError('fault must be a JSON object (a FaultSpec)')
  const unknown = Object.keys(value).filter((name) => !FAULT_FIELDS.includes(name))
  if (unknown.length > 0)
    throw new CommandError(
      `unknown fault member ${unknown.map((n) => JSON.stringify(n)).join(', ')} (a FaultSpec has ${FAULT_FIELDS.join(', ')})`,
    )
  const fault: FaultSpec = {}
  const { status, headers, body, bodyBase64, delayMs, bodyDelayMs, dropConnection, match } = value
  if (status !== undefined) {
    if (typeof status !== 'number') throw new CommandError('fault.status must be a number')
    fault.status = status
  }
  for (const [name, ms] of [
    ['delayMs', delayMs],
    ['bodyDelayMs', bodyDelayMs],
  ] as const) {
    if (ms === undefined) continue
    if (typeof ms !== 'number') throw new CommandError(`fault.${name} must be a number of ms`)
    fault[name] = ms
  }
  if (headers !== undefined) {
    if (!isPlainObject(headers)) throw new CommandError('fault.headers must be an object of header names to string values')
    const out: Record<string, string> = {}
    for (const [name, text] of Object.entries(headers)) {
      if (!HEADER_NAME.test(name)) throw new CommandError(`fault.headers: ${JSON.stringify(name)} is not a header name`)
      if (typeof text !== 'string' || /[\r\n\0]/.test(text))
        throw new CommandError(`fault.headers.${name} must be a string without CR, LF or NUL`)
      out[name] = text
    }
    fault.headers = out
  }
  if (body !== undefined && bodyBase64 !== undefined) throw new CommandError('give fault.body or fault.bodyBase64, not both')
  if (body !== undefined) fault.body = body as string | object // a string is sent as text, any other JSON as JSON
  if (bodyBase64 !== undefined) {
    if (typeof bodyBase64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(bodyBase64))
      throw new CommandError('fault.bodyBase64 must be base64 text')
    fault.body = Buffer.from(bodyBase64, 'base64')
  }
  if (dropConnection !== undefined) {
    if (dropConnection !== 'before-headers' && dropConnection !== 'mid-body') {
      throw new CommandError("fault.dropConnection must be 'before-headers' or 'mid-body'")
    }
    fault.dropConnection = dropConnection
  }
  if (match !== undefined) fault.match = matchFromJson(match)
  return fault
}

function matchFromJson(value: unknown): NonNullable<FaultSpec['match']> {
  if (!isPlainObject(value)) throw new CommandError('fault.match must be an object { method?, path? }')
  const unknown = Object.keys(value).filter((name) => name !== 'method' && name !== 'path')
  if (unknown.length > 0)
    throw new CommandError(`unknown fault.match member ${unknown.map((n) => JSON.stringify(n)).join(', ')} (it has method, path)`)
  const match: NonNullable<FaultSpec['match']> = {}
  const { method, path } = value
  if (method !== undefined) {
    if (typeof method !== 'string' || !HEADER_NAME.test(method))
      throw new CommandError('fault.match.method must be an HTTP method such as GET')
    match.method = method
  }
  if (typeof path === 'string') match.path = path
  else if (
    isPlainObject(path) &&
    typeof path['regexp'] === 'string' &&
    (path['flags'] === undefined || typeof path['flags'] === 'string')
  ) {
    try {
      match.path = new RegExp(path['regexp'], path['flags'])
    } catch (error) {
      throw new CommandError(`fault.match.path.regexp: ${error instanceof Error ? error.message : String(error)}`)
    }
  } else if (path !== undefined) {
    throw new CommandError('fault.match.path must be a path ("/rest/v1/agents") or { "regexp": "...", "flags"?: "..." }')
  }
  return match
}

/**
 * A recorded request without secrets, for `GET /__fake/requests`: the `keySecret` member of a
 * JSON body (in `body` and in `rawBody`) and the values of credential headers (`authorization`,
 * `proxy-authorization`, `cookie`, `x-api-key`) become `[redacted]`, and so does every key
 * secret of the fake (of at least 8 characters) wherever else it appears.
 */
function redactor(secrets: readonly string[]): (request: RecordedRequest) => RecordedRequest {
  const known = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length)
  const text = (value: string): string => {
    let out = value
    for (const secret of known) {
      out = out.replaceAll(secret, REDACTED)
      const escaped = JSON.stringify(secret).slice(1, -1) // as it stands inside a JSON string
      if (escaped !== secret) out = out.replaceAll(escaped, REDACTED)
    }
    return out
  }
  const deep = (value: unknown, top: boolean): unknown => {
    if (typeof value === 'string') return text(value)
    if (Array.isArray(value)) return value.map((item) => deep(item, false))
    if (typeof value === 'object' && value !== null) {
      const out: Record<string, unknown> = {}
      for (const [name, member] of Object.entries(value)) {
        const redacted = top && name === 'keySecret' ? REDACTED : deep(member, false)
        Object.defineProperty(out, name, { value: redacted, enumerable: true, writable: true, configurable: true })
      }
      return out
    }
    return value
  }
  return (request) => {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers)) headers[name] = SECRET_HEADERS.has(name) ? REDACTED : text(value)
    const query: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.query)) {
      Object.defineProperty(query, name, { value: text(value), enumerable: true, writable: true, configurable: true })
    }
    return {
      ...request,
      path: text(request.path),
      rawPath: text(request.rawPath),
      query,
      headers,
      body: deep(request.body, true),
      rawBody:
        request.rawBody === undefined
          ? undefined
          : text(request.rawBody.replace(/("keySecret"\s*:\s*)"(?:[^"\\]|\\.)*"/g, `$1"${REDACTED}"`)),
    }
  }
}
