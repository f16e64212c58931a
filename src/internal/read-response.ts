/**
 * What a response means: its body decoded, checked against the operation's schema (strictly, or
 * with warnings), or turned into the error that explains it. Every error built from a response
 * is built here, with every known secret scrubbed from its path, headers and body.
 */
import * as z from 'zod'
import {
  type APIError,
  type APIErrorInit,
  RateLimitError,
  type ResponseValidationError,
  type ValidationIssue,
  describeStatus,
  ResponseValidationError as ValidationErrorClass,
} from '../errors/errors.ts'
import { MAX_RETRY_AFTER_MS } from '../core/retry.ts'
import { apiErrorFor } from '../errors/from-status.ts'
import { serverRequestedDelay } from '../errors/retry-after.ts'
import type { APIResponse, ResponseValidation } from '../core/response.ts'
import type { ReceivedResponse } from './exchange.ts'
import type { SdkLogger } from './sdk-logger.ts'
import { toIssues } from './issues.ts'
import { MAX_RESPONSE_DEPTH, mayNestDeeperThan, nestsDeeperThan, structureProblem, tooDeep } from '../schemas/json.ts'
import type { Redactor } from './redact.ts'
import { ResponseMetadata } from './response-metadata.ts'

/** The request a response answers, as errors and logs show it. */
export interface RequestSummary {
  readonly operation: string
  readonly method: string
  /** Path with query string, as sent (not yet scrubbed). */
  readonly path: string
}

/** Everything reading a response needs besides the response. */
export interface ReadContext {
  readonly redactor: Redactor
  readonly logger: SdkLogger
  readonly validation: ResponseValidation
  /** What a body that passes is returned as: the body as sent (default), or the schema's output (when the schema transforms, e.g. typed metadata). */
  readonly output?: 'as-sent' | 'parsed' | undefined
}

/** What `.withResponse()` and `page.response` show of a response: its headers and request id scrubbed when first read. */
export function responseMetadata(raw: Pick<ReceivedResponse, 'status' | 'headers'>, redactor: Redactor): APIResponse {
  return new ResponseMetadata(raw.status, raw.headers, redactor)
}

/** The `x-request-id` of a response as received, for a log line (the log sink scrubs what it writes). */
function requestIdIn(raw: Pick<ReceivedResponse, 'headers'>): string | undefined {
  return raw.headers['x-request-id']
}

/** The body as JSON when it parses, else its text; `undefined` when empty. */
export function decodeBody(raw: Pick<ReceivedResponse, 'body' | 'truncated'>): unknown {
  return parseBody(raw, bodyText(raw))
}

/** The body's text (UTF-8), `undefined` when empty: what {@link parseBody} reads, and {@link checkBody} bounds the depth of. */
export function bodyText(raw: Pick<ReceivedResponse, 'body'>): string | undefined {
  return raw.body.length === 0 ? undefined : raw.body.toString('utf8')
}

/** {@link decodeBody} of a body whose text is `text` (from {@link bodyText}). */
export function parseBody(raw: Pick<ReceivedResponse, 'body' | 'truncated'>, text: string | undefined): unknown {
  if (text === undefined) return undefined
  if (raw.truncated) return `${text}… [cut off after ${raw.body.length} bytes]`
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/**
 * Checks a success response's decoded body against `schema` and returns the body itself (not
 * zod's copy), so every field the service sent is kept, unknown ones included, and keys such as
 * `__proto__` stay plain own properties; or, with `output: 'parsed'`, the schema's output (the
 * schema then keeps unknown fields itself, and `__proto__` keys are put back: zod drops them).
 * - `strict`: a body that does not match throws {@link ResponseValidationError}.
 * - `warn`: the body is returned as sent and each distinct issue path is logged once at `warn`;
 *   issues for which `isFatal` answers true still throw (by default a body that is not even the
 *   right kind of value; for a list, also its `pagination`, without which
 *   paging cannot be trusted).
 * A body that is not JSON, or nested more than `MAX_RESPONSE_DEPTH` (260) levels deep, always throws
 * (the error keeps the body cut at that depth).
 */
export function checkBody<S extends z.ZodType>(
  raw: ReceivedResponse,
  body: unknown,
  text: string | undefined,
  request: RequestSummary,
  schema: S,
  context: ReadContext,
  isFatal: (issue: ValidationIssue) => boolean = (issue) => issue.path.length === 0,
): z.output<S> {
  if (typeof body === 'string' || body === undefined) {
    const message =
      body === undefined ? 'Expected a JSON body, received an empty body' : 'Expected a JSON body, received text that is not JSON'
    throw responseValidationError(raw, request, [{ path: [], code: 'invalid_type', message }], context.redactor, body)
  }
  // Before any schema walks it (yours may recurse): deeper JSON would end in a RangeError. The
  // walk is skipped when the body's text has too few `{` and `[` to nest that deep (a single
  // resource, a page of them), since `body` is what JSON.parse made of exactly that text.
  if (text !== undefined && mayNestDeeperThan(text, MAX_RESPONSE_DEPTH) && nestsDeeperThan(body, MAX_RESPONSE_DEPTH)) {
    const problem = structureProblem(body, MAX_RESPONSE_DEPTH) ?? tooDeep([], MAX_RESPONSE_DEPTH)
    throw responseValidationError(raw, request, [{ ...problem, code: 'too_big' }], context.redactor, body)
  }
  // The body as sent is what is returned: check it without building zod's copy of it. Only a
  // failure (rare) or the parsed output (typed metadata) pays for safeParse.
  if (context.output !== 'parsed' && validatorOf(schema)(body)) return body as z.output<S>
  const result = schema.safeParse(body)
  if (result.success) return context.output === 'parsed' ? keepProtoKeys(body, result.data) : (body as z.output<S>)
  const issues = toIssues(result.error.issues)
  if (context.validation === 'strict' || issues.some(isFatal)) {
    throw responseValidationError(raw, request, issues, context.redactor, body)
  }
  for (const issue of issues) warnOnce(issue, request, raw, context.logger)
  return body as z.output<S>
}

/**
 * zod leaves every `__proto__` key out of the objects it outputs (assigning one would set the
 * prototype): puts those of `input` back into `output`, as plain own properties, wherever both hold
 * an object under the same key, so that a parsed body keeps them as a body returned as sent does.
 * Metadata holds none by then (typed metadata refuses them: a schema of yours may reshape it); the
 * SDK's own schemas keep every other key where it was. Returns `output`.
 */
function keepProtoKeys<T>(input: unknown, output: T, depth = 0): T {
  if (input === output || typeof input !== 'object' || input === null || typeof output !== 'object' || output === null) return output
  if (depth > MAX_RESPONSE_DEPTH || Array.isArray(input) !== Array.isArray(output)) return output
  const from = input as Record<string, unknown>
  const to = output as Record<string, unknown>
  for (const key of Object.keys(from)) {
    if (!Object.hasOwn(to, key)) {
      if (key === '__proto__') Object.defineProperty(to, key, { value: from[key], enumerable: true, writable: true, configurable: true })
    } else keepProtoKeys(from[key], to[key], depth + 1)
  }
  return output
}

/** Each response schema's check, made on first use. */
const validators = new WeakMap<z.ZodType, (body: unknown) => boolean>()

/**
 * Whether `body` matches `schema`, without building the output `safeParse` builds (a full copy of
 * the page, thrown away: it was 26 % of the bytes allocated per 100-message page). zod 4's
 * `z.compile` generates, besides a parser, a validator that only checks (what `validate` calls);
 * it accepts exactly what `safeParse` accepts, and `checkBody` asks `safeParse` for the issues when
 * it refuses. A schema zod cannot compile, a runtime that refuses generated code
 * (`--disallow-code-generation-from-strings`), or zod's `jitless` setting (no generated code,
 * e.g. under a CSP) keep the runtime parser: `safeParse(body).success`, as before.
 */
function validatorOf(schema: z.ZodType): (body: unknown) => boolean {
  let validator = validators.get(schema)
  if (validator === undefined) {
    validator = (body) => schema.safeParse(body).success
    if (z.config().jitless !== true) {
      try {
        const compiled = z.compile(schema, { strict: true })
        validator = (body) => compiled.validate(body)
      } catch {
        // Not compilable (or no generated code here): the runtime parser, as above.
      }
    }
    validators.set(schema, validator)
  }
  return validator
}

function warnOnce(issue: ValidationIssue, request: RequestSummary, raw: ReceivedResponse, logger: SdkLogger): void {
  const where = issue.path.map((key) => (typeof key === 'number' ? '*' : key)).join('.') || '(root)'
  logger.logOnce(
    `response:${request.operation}:${where}:${issue.code}`,
    'warn',
    `${request.operation}: the response does not match the schema at ${where} (${issue.message}); returned as sent because responseValidation is 'warn'. Further responses with this issue are not logged.`,
    { operation: request.operation, method: request.method, path: request.path, issuePath: where, requestId: requestIdIn(raw) },
  )
}

/** The {@link APIError} subclass for a response whose status is not success, secrets scrubbed. */
export function statusError(raw: ReceivedResponse, body: unknown, request: RequestSummary, redactor: Redactor): APIError {
  return apiErrorFor(errorView(raw, body, request, redactor))
}

/** A {@link ResponseValidationError} for `raw`, secrets scrubbed from path, headers, body and issues. */
export function responseValidationError(
  raw: Pick<ReceivedResponse, 'status' | 'headers'>,
  request: RequestSummary,
  issues: readonly ValidationIssue[],
  redactor: Redactor,
  body: unknown,
): ResponseValidationError {
  return new ValidationErrorClass({ ...errorView(raw, body, request, redactor), issues: redactor.redactIssues(issues) })
}

/**
 * The error of a response that asked for a wait (`Retry-After`, `retry-after-ms`) of `waitMs`,
 * longer than {@link MAX_RETRY_AFTER_MS}: the SDK does not wait that long for a retry, and the
 * message says so (its class follows the status, e.g. `RateLimitError` for a 429; `retryAfterMs`
 * holds the wait, for the caller's own later attempt).
 */
export function waitTooLongError(raw: ReceivedResponse, request: RequestSummary, waitMs: number, redactor: Redactor): APIError {
  const view = errorView(raw, decodeBody(raw), request, redactor)
  const why = `not retried: the service asked to wait ${waitMs.toLocaleString('en-US')} ms, more than the SDK waits for a retry (at most ${MAX_RETRY_AFTER_MS.toLocaleString('en-US')} ms; retryAfterMs holds the wait, to schedule a later attempt)`
  return apiErrorFor(view, `${describeStatus(view)}: ${why}`)
}

/**
 * The {@link RateLimitError} of a 429 not retried because the call asked for no retry
 * (`maxRetries: 0`): the response's status, headers, body and request id, and a message that says
 * so and what wait the service asked for, if any, for the caller's own later attempt.
 */
export function notRetriedError(the429: ReceivedResponse, request: RequestSummary, redactor: Redactor): RateLimitError {
  const view = errorView(the429, decodeBody(the429), request, redactor)
  const waitMs = serverRequestedDelay(the429.headers)
  const wait =
    waitMs === undefined
      ? 'the service named no wait (no Retry-After)'
      : `the service asked to wait ${waitMs.toLocaleString('en-US')} ms (retryAfterMs)`
  const why = `not retried (maxRetries: 0): the service is limiting requests; ${wait}. The client paces its requests from now on; with maxRetries above 0 a 429 is sent again when the rate allows`
  return new RateLimitError(view, `429 Too Many Requests: ${view.method} ${view.path}: ${why}`)
}

/**
 * The {@link RateLimitError} of a call with `rateLimitPause: 'fail'` whose 429 was its operation's
 * own limit (rate-limit/scope.ts) and asked for a wait: not waited, as a paused client is not.
 */
export function ownLimitError(the429: ReceivedResponse, request: RequestSummary, waitMs: number, redactor: Redactor): RateLimitError {
  const view = errorView(the429, decodeBody(the429), request, redactor)
  const why = `not retried (rateLimitPause: 'fail'): its 429s come while the client's other requests are accepted (or wait for the turns this operation takes), so they are taken for a limit of this operation's own, and the service asked to wait ${waitMs.toLocaleString('en-US')} ms (retryAfterMs)`
  return new RateLimitError(view, `429 Too Many Requests: ${view.method} ${view.path}: ${why}`)
}

/**
 * The {@link RateLimitError} of a paced call that stopped retrying 429s because the service
 * accepted no request of its operation for `starvedMs` (see `rate-limit/limiter.ts`): the last 429's
 * status, headers, body and request id, and a message that says why it was not retried.
 */
export function starvedError(the429: ReceivedResponse, request: RequestSummary, starvedMs: number, redactor: Redactor): RateLimitError {
  const view = errorView(the429, decodeBody(the429), request, redactor)
  const why = `the service has answered only 429 for ${starvedMs.toLocaleString('en-US')} ms and accepted no ${request.operation} request of this client meanwhile, so the call was not retried again (pacing: 'adaptive')`
  return new RateLimitError(view, `429 Too Many Requests: ${view.method} ${view.path}: ${why}`)
}

/**
 * The {@link RateLimitError} of a call refused because the client is paused after a 429
 * (`because`: `rateLimitPause: 'fail'`, or the call's pause budget spent): status, headers, body and
 * request id of `the429` (the 429 that started the pause; unknown when the pause came from
 * elsewhere), `retryAfterMs` what is left of the pause.
 */
export function pausedError(
  the429: ReceivedResponse | undefined,
  request: RequestSummary,
  remainingMs: number,
  redactor: Redactor,
  fromStore = false,
  because = "rateLimitPause: 'fail'",
): RateLimitError {
  const raw = the429 ?? { status: 429, headers: {} }
  const view = errorView(raw, the429 === undefined ? undefined : decodeBody(the429), request, redactor)
  const why = fromStore
    ? `the client is paused for another ${remainingMs} ms after a 429 seen by another process, read from the shared rateLimitStore`
    : `the client is paused after a 429 for another ${remainingMs} ms`
  return new RateLimitError(
    { ...view, retryAfterMs: remainingMs },
    `429 Too Many Requests: ${view.method} ${view.path}: not sent: ${why} (${because})`,
  )
}

/**
 * What an error keeps of a response: status and method as they were; path, headers (the request
 * id among them) and body with every known secret scrubbed. Every error built from a response goes
 * through here.
 */
function errorView(
  raw: Pick<ReceivedResponse, 'status' | 'headers'>,
  body: unknown,
  request: RequestSummary,
  redactor: Redactor,
): APIErrorInit {
  const headers = redactor.redactValue(raw.headers)
  return {
    status: raw.status,
    headers,
    body: redactor.redactValue(body),
    method: request.method,
    path: redactor.redact(request.path),
    requestId: headers['x-request-id'],
  }
}
