/**
 * The error hierarchy of the SDK (API.md, "Errors"). Every error the SDK throws is a
 * {@link ChatServiceError}. Messages, headers, bodies and causes are scrubbed of the key secret and
 * of issued tokens before an error is built, so `String(error)`, `util.inspect(error)` and
 * `JSON.stringify(error)` are safe to log.
 */
import { RETRYABLE_STATUSES, serverRequestedDelay } from './retry-after.ts'

/** One problem found by a schema: where it is (`path`, keys and indexes) and what is wrong. */
export interface ValidationIssue {
  /** Location of the problem inside the checked value; `[]` is the value itself. */
  readonly path: readonly (string | number)[]
  /** Human-readable description, e.g. `Too big: expected number to be <=100`. */
  readonly message: string
  /** Machine-readable kind, following zod's issue codes (`invalid_type`, `too_big`, ...). */
  readonly code: string
  /**
   * For a union that no branch matched (`code: 'invalid_union'`): each branch's issues, in the
   * union's order, with paths inside the value at {@link ValidationIssue.path}. The `message`
   * then says the same, e.g.
   * `no branch matched: branch 1 (version 2): subscription: …; branch 2: plan: …`
   * (a branch is labelled by the literal it wants at a top-level key, when there is one; at most
   * 3 issues a branch are written out). Absent for every other issue.
   */
  readonly branches?: readonly (readonly ValidationIssue[])[] | undefined
}

/**
 * Where an error keeps the names of its classes, so that `instanceof` works across copies of the
 * SDK: an app that both `import`s and `require`s it loads the ESM and the CommonJS build, and each
 * has its own classes. A registered symbol is the same in both (undici brands its errors alike).
 */
const BRANDS = Symbol.for('chat-service-sdk.error.brands')

/**
 * Base class of every error thrown by `chat-service-sdk`. Catch it to catch them all. Thrown as
 * itself for a closed client or a request the SDK cancelled: `retryable: false`.
 */
export class ChatServiceError extends Error {
  /** Always `'ChatServiceError'`. */
  override readonly name: string = 'ChatServiceError'
  /**
   * Whether the same call may succeed if you make it again later: `true` for a connection failure
   * or timeout and for the statuses the SDK retries (408, 429, 500, 502, 503, 504), `false` for
   * everything that would fail the same way (a 4xx, bad input, a response that does not match its
   * schema, your own abort, a closed client). Hand it to your job queue to choose between retry and
   * give up. The SDK has already made its own retries (`maxRetries`) before throwing.
   */
  readonly retryable: boolean

  /**
   * @param message - What went wrong.
   * @param options - `cause`, and whether the error is {@link ChatServiceError.retryable} (default `false`).
   */
  constructor(message?: string, options?: ErrorOptions & { readonly retryable?: boolean | undefined }) {
    const { retryable = false, ...errorOptions } = options ?? {}
    super(message, 'cause' in errorOptions ? errorOptions : undefined)
    this.retryable = retryable
    Object.defineProperty(this, BRANDS, { value: brandsOf(new.target) })
  }

  /**
   * `error instanceof NotFoundError` is true for a NotFoundError of this copy of the SDK and of any
   * other copy (ESM and CommonJS builds, two installed versions): it compares class names, kept
   * in a registered symbol. A class you derive yourself keeps plain prototype semantics.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true
    if (value === null || typeof value !== 'object') return false
    const brands = (value as { [BRANDS]?: unknown })[BRANDS]
    return Array.isArray(brands) && brands.includes(brandOf(this))
  }

  /** Plain-object view for loggers and `JSON.stringify`: name, message and the error's own fields. */
  toJSON(): Record<string, unknown> {
    return { ...(this as unknown as Record<string, unknown>), name: this.name, message: this.message }
  }
}

/**
 * The brand of each SDK error class: its public name, written out because a bundler may rename
 * the class itself (`APIError2`). Filled in at the end of this file.
 */
const BRAND_BY_CLASS = new Map<unknown, string>()

function brandOf(errorClass: unknown): string | undefined {
  return BRAND_BY_CLASS.get(errorClass)
}

/** The brands of `errorClass` and every SDK class above it, most specific first. */
function brandsOf(errorClass: unknown): readonly string[] {
  const brands: string[] = []
  for (let current = errorClass; typeof current === 'function' && current !== Error; current = Object.getPrototypeOf(current)) {
    const brand = brandOf(current)
    if (brand !== undefined) brands.push(brand)
  }
  return Object.freeze(brands)
}

/**
 * The service answered with a status that is not success (any status but 200 on token issuance;
 * any non-2xx elsewhere, including a 3xx: redirects are never followed because the credentials
 * travel in the body). The spec shows no error body shape, so `body` is kept as it came.
 * Subclasses by status: {@link BadRequestError} 400, {@link AuthenticationError} 401,
 * {@link PermissionDeniedError} 403, {@link NotFoundError} 404, {@link ConflictError} 409,
 * {@link UnprocessableEntityError} 422, {@link RateLimitError} 429, {@link InternalServerError} ≥ 500.
 */
export class APIError extends ChatServiceError {
  /** Always `'APIError'`. */
  override readonly name: string = 'APIError'
  /** HTTP status code, e.g. `404`. */
  readonly status: number
  /** Response headers (lower-case names). */
  readonly headers: Readonly<Record<string, string>>
  /** Response body: parsed JSON, else text; `undefined` when empty. Secrets scrubbed. */
  readonly body: unknown
  /** HTTP method of the failed request. */
  readonly method: string
  /** Request path with query string. */
  readonly path: string
  /** The `x-request-id` response header (quote it in support tickets); `undefined` when absent. */
  readonly requestId: string | undefined
  /**
   * How long the service asked the caller to wait before trying again, in ms, on whatever status
   * it said so with (a 429, a 503, a 3xx with `Retry-After`, ...): from `retry-after-ms`
   * (milliseconds, fractions rounded up), else `Retry-After` in seconds (fractions honoured) or as
   * an HTTP date (counted from the response's `Date` header, the server's clock, or from when the
   * error was made if it has none; a date in the past is 0); a header sent more than once counts
   * its longest readable wait. `undefined` when the response has neither, or neither is readable.
   * For a {@link RateLimitError} thrown because the client is paused after a 429
   * (`rateLimitPause: 'fail'`), what is left of that pause.
   *
   * The SDK has already honoured it for the statuses it retries (waits of up to 60 s); use it to
   * schedule your own later attempt, e.g. a job queue's delay.
   */
  readonly retryAfterMs: number | undefined

  /**
   * `retryable` follows the status: `true` for 408, 429, 500, 502, 503 and 504.
   * @param init - What the SDK knows about the request and the response.
   * @param message - Default: the status, its reason phrase, the method, the path and the request id.
   */
  constructor(
    init: {
      /** HTTP status code of the response. */
      readonly status: number
      /** Response headers, lower-case names; repeated headers joined with `, `. */
      readonly headers: Readonly<Record<string, string>>
      /** Response body: parsed JSON when it was JSON, else the text, `undefined` when empty. */
      readonly body: unknown
      /** HTTP method of the request, e.g. `GET`. */
      readonly method: string
      /** Request path with query string, e.g. `/rest/v1/agents?page=1&limit=20`; secrets scrubbed. */
      readonly path: string
      /** The `x-request-id` response header, when the service sent one. */
      readonly requestId?: string | undefined
      /**
       * The wait to report as {@link APIError.retryAfterMs}, in ms, when it is not the response's own
       * (for a call refused during the client's 429 pause, the SDK passes what is left of the pause).
       * Default: read from `headers` (`retry-after-ms`, else `Retry-After`).
       */
      readonly retryAfterMs?: number | undefined
    },
    message?: string,
  ) {
    super(message ?? describeStatus(init), { retryable: RETRYABLE_STATUSES.includes(init.status) })
    this.status = init.status
    this.headers = init.headers
    this.body = init.body
    this.method = init.method
    this.path = init.path
    this.requestId = init.requestId
    this.retryAfterMs = init.retryAfterMs ?? serverRequestedDelay(init.headers)
  }
}

/** HTTP 400: the service refused the parameters or body (spec, Errors). */
export class BadRequestError extends APIError {
  /** Always `'BadRequestError'`. */
  override readonly name: string = 'BadRequestError'
}
/** HTTP 401: invalid API credentials (spec, Authentication 3). */
export class AuthenticationError extends APIError {
  /** Always `'AuthenticationError'`. */
  override readonly name: string = 'AuthenticationError'
}
/** HTTP 403: the credentials may not do this. */
export class PermissionDeniedError extends APIError {
  /** Always `'PermissionDeniedError'`. */
  override readonly name: string = 'PermissionDeniedError'
}
/** HTTP 404: the record does not exist or belongs to another company (spec, Errors). */
export class NotFoundError extends APIError {
  /** Always `'NotFoundError'`. */
  override readonly name: string = 'NotFoundError'
}
/** HTTP 409: conflict. */
export class ConflictError extends APIError {
  /** Always `'ConflictError'`. */
  override readonly name: string = 'ConflictError'
}
/** HTTP 422: the request was well-formed but not acceptable. */
export class UnprocessableEntityError extends APIError {
  /** Always `'UnprocessableEntityError'`. */
  override readonly name: string = 'UnprocessableEntityError'
}
/**
 * HTTP 429: rate limited. Retried automatically, honouring `Retry-After`; thrown once retries run
 * out; or, with nothing sent, for a call made with `rateLimitPause: 'fail'` while the client is
 * paused after a 429, or whose waits for that pause would pass 60,000 ms per try. Then `status`,
 * `headers`, `body` and `requestId` are those of the 429 that started the pause, or, when the pause
 * came from a `rateLimitStore` (another process's 429), `429`, `{}`, `undefined` and `undefined`;
 * the message says which. `retryAfterMs` (see {@link APIError.retryAfterMs}) is the wait the 429
 * asked for, or, for a call refused during the pause, what is left of the pause. `retryable: true`.
 */
export class RateLimitError extends APIError {
  /** Always `'RateLimitError'`. */
  override readonly name: string = 'RateLimitError'
}
/**
 * HTTP 500 or above: the service failed. 500, 502, 503 and 504 are retried before this is thrown
 * (`retryable: true`); other statuses, such as 501, are not (`retryable: false`).
 */
export class InternalServerError extends APIError {
  /** Always `'InternalServerError'`. */
  override readonly name: string = 'InternalServerError'
}

/**
 * No usable response arrived: DNS, refused or reset connection, a body cut off, a response undici
 * refuses (one that begins with an unsolicited `100 Continue`). `cause` keeps the underlying
 * error. `retryable: true`, except for failures that repeat on every attempt (an untrusted TLS
 * certificate, an invalid argument, a closed dispatcher, that `100 Continue`, a redirect your
 * `dispatcher` followed although told not to), which are not retried either.
 */
export class APIConnectionError extends ChatServiceError {
  /** Always `'APIConnectionError'`. */
  override readonly name: string = 'APIConnectionError'
  /** HTTP method of the failed request. */
  readonly method: string
  /** Request path with query string. */
  readonly path: string

  constructor(init: { method: string; path: string; message?: string; cause?: unknown; retryable?: boolean | undefined }) {
    super(init.message ?? `Connection error: ${init.method} ${init.path}`, {
      ...(init.cause === undefined ? {} : { cause: init.cause }),
      retryable: init.retryable ?? true,
    })
    this.method = init.method
    this.path = init.path
  }
}

/**
 * An attempt took longer than the `timeout` option (ms): to get a connection (a free pooled socket,
 * or a new one; the message then says the request was not sent), or from the moment the request
 * was sent to the last body byte; or the whole call ran
 * out of its `totalTimeout` (then `cause` is the last attempt's error, when an attempt ended before:
 * e.g. the `InternalServerError` of a 503). `retryable: true`.
 */
export class APITimeoutError extends APIConnectionError {
  /** Always `'APITimeoutError'`. */
  override readonly name: string = 'APITimeoutError'
}

/**
 * The caller's `AbortSignal` fired, during a request, while waiting to retry, or while waiting out
 * the client's 429 pause (the message says which). `cause` is the signal's `reason` (for
 * `AbortSignal.timeout()`, a `TimeoutError`). Never retried; `retryable: false`.
 */
export class APIUserAbortError extends ChatServiceError {
  /** Always `'APIUserAbortError'`. */
  override readonly name: string = 'APIUserAbortError'
}

/**
 * Parameters or options failed their schema. Thrown (or rejected) before anything is sent: no
 * request was made. `issues` lists every problem with its path. `retryable: false`.
 */
export class RequestValidationError extends ChatServiceError {
  /** Always `'RequestValidationError'`. */
  override readonly name: string = 'RequestValidationError'
  /** Every problem found, each with its path inside the parameters. */
  readonly issues: readonly ValidationIssue[]

  constructor(operation: string, issues: readonly ValidationIssue[]) {
    super(`Invalid parameters for ${operation}: ${formatIssues(issues)}. Nothing was sent.`)
    this.issues = issues
  }
}

/**
 * A response arrived but is not what the spec describes: not JSON, a field of the wrong type, a
 * pagination block that contradicts the request, or a body over `maxResponseBytes`. Keeps the
 * status, the headers and the raw body (parsed JSON, else text) next to the issues. `retryable: false`:
 * the same request would be answered the same way.
 */
export class ResponseValidationError extends ChatServiceError {
  /** Always `'ResponseValidationError'`. */
  override readonly name: string = 'ResponseValidationError'
  /** Every problem found, each with its path inside the response body. */
  readonly issues: readonly ValidationIssue[]
  /** HTTP status of the response. */
  readonly status: number
  /** Response headers (lower-case names). */
  readonly headers: Readonly<Record<string, string>>
  /** The body as received: parsed JSON, else text; `undefined` when cut off or empty. Secrets scrubbed. */
  readonly body: unknown
  /** HTTP method of the request. */
  readonly method: string
  /** Request path with query string. */
  readonly path: string
  /** The `x-request-id` response header; `undefined` when absent. */
  readonly requestId: string | undefined

  constructor(init: ConstructorParameters<typeof APIError>[0] & { issues: readonly ValidationIssue[] }) {
    super(
      `Unexpected response to ${init.method} ${init.path} (HTTP ${init.status}${requestIdNote(init.requestId)}): ${formatIssues(init.issues)}`,
    )
    this.issues = init.issues
    this.status = init.status
    this.headers = init.headers
    this.body = init.body
    this.method = init.method
    this.path = init.path
    this.requestId = init.requestId
  }
}

/**
 * A cursor (`listAll({ cursor })`) no longer matches the data: the conversation or message it points
 * at is not where the cursor says, so resuming from it could skip or repeat items. Start again
 * without the cursor. Thrown while iterating, never before anything is sent. `retryable: false`.
 */
export class StaleCursorError extends ChatServiceError {
  /** Always `'StaleCursorError'`. */
  override readonly name: string = 'StaleCursorError'
}

/** How many ids the message of a {@link DuplicateExternalIdError} writes out (the rest are counted). */
const MAX_IDS_IN_MESSAGE = 10

/**
 * `customerUsers.findByExternalId` (or `updateMetadata`, which looks the user up the same way)
 * found more than one customer user whose `external_id` is exactly the one asked for, so no single
 * user can be returned (or updated: nothing was written). The service does not promise that
 * external ids are unique; resolving the duplicate is up to you (the users are in `ids`; see them
 * with `customerUsers.list({ external_id })`). `retryable: false`: the same lookup finds the same
 * users until the data changes. Its message names the external id and the ids (at most 10, then a
 * count), scrubbed of secrets like every message of the SDK.
 */
export class DuplicateExternalIdError extends ChatServiceError {
  /** Always `'DuplicateExternalIdError'`. */
  override readonly name: string = 'DuplicateExternalIdError'
  /** The `external_id` that more than one user has. */
  readonly externalId: string
  /**
   * The internal `id` of every user found with it, each once, in the order the service listed
   * them (over every page of the filter: a user that a page shift showed twice counts once).
   * The SDK collects at most 1,000: with more, the lookup stops there and the message says
   * "at least 1000".
   */
  readonly ids: readonly string[]

  /** @param init - The `externalId` looked up, the `ids` of the users found with it (two or more, in the order listed), and whether `ids` stops short of every match (`truncated`, default `false`: the lookup stopped collecting at its bound). */
  constructor(init: { readonly externalId: string; readonly ids: readonly string[]; readonly truncated?: boolean | undefined }) {
    const shown = init.ids.slice(0, MAX_IDS_IN_MESSAGE).join(', ')
    const more = init.ids.length > MAX_IDS_IN_MESSAGE ? ` and ${init.ids.length - MAX_IDS_IN_MESSAGE} more` : ''
    const count = init.truncated === true ? `At least ${init.ids.length}` : String(init.ids.length)
    super(
      `${count} customer users have the external_id ${JSON.stringify(init.externalId)} (ids ${shown}${more}): it is not unique, ` +
        'so no single user can be chosen. Resolve the duplicate; see them with customerUsers.list({ external_id }).',
    )
    this.externalId = init.externalId
    this.ids = Object.freeze([...init.ids])
  }
}

/**
 * A listing of a whole list (`for await` over a list method, `.pages()`, `listAll`, `listNew`, the
 * messages of a conversation they read) stopped because the list kept moving while it was read:
 * repairing the shifts would have taken more pages read again than a listing may (`10 + 2 × T` in
 * one pass, T its number of pages, or 12 in a row without getting further), or a listing that
 * started past page 1 would have had to read before its start. Every item yielded before it came
 * once; nothing was skipped without a word. Start the listing again once the list is quieter
 * (`retryable: true`). Thrown while iterating, never before anything is sent.
 */
export class UnstableListError extends ChatServiceError {
  /** Always `'UnstableListError'`. */
  override readonly name: string = 'UnstableListError'
  /** The SDK method that listed, e.g. `'customerUsers.list'`. */
  readonly operation: string
  /** Times two consecutive pages showed the list had moved between them. */
  readonly shifts: number
  /** Pages read again to repair them before the listing stopped. */
  readonly rereads: number

  /**
   * @param message - What happened, already scrubbed of secrets (the SDK's listings write it).
   * @param details - The listing's `operation`, its `shifts` and its `rereads` (see the members).
   */
  constructor(message: string, details: { readonly operation: string; readonly shifts: number; readonly rereads: number }) {
    super(message, { retryable: true })
    this.operation = details.operation
    this.shifts = details.shifts
    this.rereads = details.rereads
  }
}

const MAX_ISSUES_IN_MESSAGE = 10

/**
 * Renders issues as `path: message; path: message` (at most `max`, default 10, then a count).
 * `root` names an empty path (default `(root)`); `separator` goes between issues (default `; `).
 */
export function formatIssues(
  issues: readonly ValidationIssue[],
  { max = MAX_ISSUES_IN_MESSAGE, root = '(root)', separator = '; ' }: { max?: number; root?: string; separator?: string } = {},
): string {
  const shown = issues.slice(0, max).map((issue) => `${issue.path.length === 0 ? root : issue.path.join('.')}: ${issue.message}`)
  if (issues.length > max) shown.push(`and ${issues.length - max} more`)
  return shown.join(separator)
}

const MAX_DETAIL_CHARS = 300

function requestIdNote(requestId: string | undefined): string {
  return requestId === undefined ? '' : `, request id ${requestId}`
}

/** An {@link APIError}'s default message: status, reason phrase, method, path, request id and the service's own message. */
export function describeStatus(init: APIErrorInit): string {
  const id = init.requestId === undefined ? '' : ` (request id ${init.requestId})`
  const head = `${init.status} ${reasonPhrase(init.status)}: ${init.method} ${init.path}${id}`
  const location = init.headers['location']
  if (init.status >= 300 && init.status < 400) {
    return `${head}: redirect not followed${location === undefined ? '' : ` (location: ${location})`}; credentials travel in the body, so the SDK never re-sends them elsewhere`
  }
  const detail = serverMessage(init.body)
  return detail === undefined ? head : `${head}: ${detail}`
}

function serverMessage(body: unknown): string | undefined {
  let text: string | undefined
  if (typeof body === 'string') text = body
  else if (body !== null && typeof body === 'object') {
    const record = body as Record<string, unknown>
    const error = record['error']
    if (typeof error === 'string') text = error
    else if (error !== null && typeof error === 'object' && typeof (error as Record<string, unknown>)['message'] === 'string') {
      text = (error as Record<string, unknown>)['message'] as string
    } else if (typeof record['message'] === 'string') text = record['message']
    else text = JSON.stringify(body)
  }
  if (text === undefined || text.trim() === '') return undefined
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > MAX_DETAIL_CHARS ? `${flat.slice(0, MAX_DETAIL_CHARS)}…` : flat
}

function reasonPhrase(status: number): string {
  return (
    REASONS[status] ?? (status >= 500 ? 'Server Error' : status >= 400 ? 'Client Error' : status >= 300 ? 'Redirect' : 'Unexpected Status')
  )
}

const REASONS: Record<number, string> = {
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
}

for (const [errorClass, brand] of [
  [ChatServiceError, 'ChatServiceError'],
  [APIError, 'APIError'],
  [BadRequestError, 'BadRequestError'],
  [AuthenticationError, 'AuthenticationError'],
  [PermissionDeniedError, 'PermissionDeniedError'],
  [NotFoundError, 'NotFoundError'],
  [ConflictError, 'ConflictError'],
  [UnprocessableEntityError, 'UnprocessableEntityError'],
  [RateLimitError, 'RateLimitError'],
  [InternalServerError, 'InternalServerError'],
  [APIConnectionError, 'APIConnectionError'],
  [APITimeoutError, 'APITimeoutError'],
  [APIUserAbortError, 'APIUserAbortError'],
  [RequestValidationError, 'RequestValidationError'],
  [ResponseValidationError, 'ResponseValidationError'],
  [StaleCursorError, 'StaleCursorError'],
  [DuplicateExternalIdError, 'DuplicateExternalIdError'],
  [UnstableListError, 'UnstableListError'],
] as const) {
  BRAND_BY_CLASS.set(errorClass, brand)
}

/** What the SDK knows about the request and response behind an {@link APIError}: its constructor's argument. */
export type APIErrorInit = ConstructorParameters<typeof APIError>[0]
