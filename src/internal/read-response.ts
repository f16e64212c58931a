/**
 * What a response means: its body decoded, checked against the operation's schema (strictly, or
 * with warnings), or turned into the error that explains it. Every error built from a response
 * is built here, with every known secret scrubbed from its path, headers and body.
 */
import * as z from 'zod'
import {
  type APIError,
  type APIErrorInit,
  formatIssues,
  RateLimitError,
  type ResponseValidationError,
  type ValidationIssue,
  ResponseValidationError as ValidationErrorClass,
} from '../errors/errors.ts'
import { apiErrorFor } from '../errors/from-status.ts'
import type { APIResponse, ResponseValidation } from '../core/response.ts'
import type { ReceivedResponse } from './exchange.ts'
import type { SdkLogger } from './sdk-logger.ts'
import { toIssues } from './issues.ts'
import { MAX_RESPONSE_DEPTH, nestsDeeperThan, structureProblem, tooDeep } from '../schemas/json.ts'
import type { Redactor } from './redact.ts'

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
  /** A list whose items hold a member that a caller's schema reads (typed metadata): see {@link checkMembers}. */
  readonly member?: MemberCheck | undefined
}

/**
 * One member of every list item checked by a caller's schema after the page passed its own
 * (`metadata` under `withMetadata(schema)`): the item is returned with the schema's output in that
 * member; an item whose member the schema rejects fails the page (`'throw'`, under
 * `responseValidation: 'strict'`) or is left out of it and reported (`'skip'`, and under `'warn'`,
 * where returning it as sent would hand back a value its type does not describe).
 */
export interface MemberCheck {
  /** The member's key in each item, e.g. `'metadata'`. */
  readonly name: string
  readonly schema: z.ZodType
  readonly onInvalid: 'throw' | 'skip'
  /** The option that chose this, for logs (`withMetadata's onInvalidMetadata`). */
  readonly option: string
}

/** An item left out of a page because its member failed the caller's schema. */
export interface SkippedItem {
  /** Its position in `data` as the service sent it. */
  readonly index: number
  /** The item as sent. */
  readonly item: unknown
  /** What the schema found, paths from the item (`['metadata', 'plan']`), secrets scrubbed. */
  readonly issues: readonly ValidationIssue[]
  /**
   * The ResponseValidationError for this item: `lead` (a first issue at `data.N`, saying what it
   * means for the caller) and the item's issues at `data.N.…`; the page's status, headers, request
   * id and body as sent.
   */
  error(lead: string): ResponseValidationError
}

/** What a page body returned by {@link checkBody} holds under this key when items were left out of it. */
export const SKIPPED: unique symbol = Symbol('chat-service-sdk.skipped')

/** The members of a page body under {@link SKIPPED}. */
export interface Skipped {
  readonly items: readonly SkippedItem[]
  /** The body as the service sent it (every item). */
  readonly body: unknown
}

/** The items a page body left out (see {@link checkMembers}), if any. */
export function skippedIn(body: unknown): Skipped | undefined {
  return body !== null && typeof body === 'object' ? (body as { [SKIPPED]?: Skipped })[SKIPPED] : undefined
}

/** What `.withResponse()` and `page.response` show of a response. */
export function responseMetadata(raw: Pick<ReceivedResponse, 'status' | 'headers' | 'requestId'>): APIResponse {
  return { status: raw.status, headers: raw.headers, requestId: raw.requestId }
}

/** The body as JSON when it parses, else its text; `undefined` when empty. */
export function decodeBody(raw: Pick<ReceivedResponse, 'body' | 'truncated'>): unknown {
  if (raw.body.length === 0) return undefined
  const text = raw.body.toString('utf8')
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
  // Before any schema walks it (yours may recurse): deeper JSON would end in a RangeError.
  if (nestsDeeperThan(body, MAX_RESPONSE_DEPTH)) {
    const problem = structureProblem(body, MAX_RESPONSE_DEPTH) ?? tooDeep([], MAX_RESPONSE_DEPTH)
    throw responseValidationError(raw, request, [{ ...problem, code: 'too_big' }], context.redactor, body)
  }
  // The body as sent is what is returned: check it without building zod's copy of it. Only a
  // failure (rare) or the parsed output (typed metadata) pays for safeParse.
  if (context.output !== 'parsed' && validatorOf(schema)(body)) return checkMembers(raw, body, request, context) as z.output<S>
  const result = schema.safeParse(body)
  if (result.success)
    return context.output === 'parsed' ? keepProtoKeys(body, result.data) : (checkMembers(raw, body, request, context) as z.output<S>)
  const issues = toIssues(result.error.issues)
  if (context.validation === 'strict' || issues.some(isFatal)) {
    throw responseValidationError(raw, request, issues, context.redactor, body)
  }
  for (const issue of issues) warnOnce(issue, request, raw, context.logger)
  return checkMembers(raw, body, request, context) as z.output<S>
}

/**
 * A list page's items with `context.member` checked by its schema (a page that passed its own
 * schema, or is returned as sent under `warn`): each item comes back with the schema's output in
 * that member. An item whose member the schema rejects:
 * - `onInvalid: 'throw'` under `strict`: throws one ResponseValidationError with the issues of
 *   every such item of the page, at `data.N.<member>…`;
 * - otherwise (`'skip'`, or `warn`): is left out of `data`, logged at `warn` (one line per item:
 *   its index, id and issues, secrets scrubbed) and listed under {@link SKIPPED} with the body as sent.
 * Without `context.member`, or for a body without a `data` array, returns `body` itself.
 */
function checkMembers(raw: ReceivedResponse, body: unknown, request: RequestSummary, context: ReadContext): unknown {
  const { member } = context
  const data = (body as { data?: unknown }).data
  if (member === undefined || !Array.isArray(data)) return body
  const kept: unknown[] = []
  const failed: { index: number; item: unknown; issues: ValidationIssue[] }[] = []
  data.forEach((item: unknown, index) => {
    const value = item !== null && typeof item === 'object' ? (item as Record<string, unknown>)[member.name] : undefined
    const parsed = member.schema.safeParse(value)
    if (parsed.success) kept.push({ ...(item as object), [member.name]: parsed.data })
    else {
      const issues = toIssues(parsed.error.issues).map((issue) => ({ ...issue, path: [member.name, ...issue.path] }))
      failed.push({ index, item, issues: context.redactor.redactIssues(issues) })
    }
  })
  const at = (index: number, issues: readonly ValidationIssue[]): ValidationIssue[] =>
    issues.map((issue) => ({ ...issue, path: ['data', index, ...issue.path] }))
  if (failed.length === 0) return { ...(body as object), data: kept }
  if (member.onInvalid === 'throw' && context.validation === 'strict') {
    throw responseValidationError(
      raw,
      request,
      failed.flatMap(({ index, issues }) => at(index, issues)),
      context.redactor,
      body,
    )
  }
  const why = member.onInvalid === 'skip' ? `${member.option}: 'skip'` : `responseValidation: 'warn'`
  const items = failed.map(({ index, item, issues }): SkippedItem => {
    const id = (item as { id?: unknown } | null)?.id
    context.logger.log(
      'warn',
      `${request.operation}: left out data.${index} (id ${String(id)}): its ${member.name} does not match your schema (${why}): ${formatIssues(issues)}`,
      { operation: request.operation, method: request.method, path: request.path, requestId: raw.requestId, index, id, issues },
    )
    return {
      index,
      item,
      issues,
      error: (lead) =>
        responseValidationError(
          raw,
          request,
          [{ path: ['data', index], code: 'custom', message: lead }, ...at(index, issues)],
          context.redactor,
          body,
        ),
    }
  })
  const skipped: Skipped = { items, body }
  return { ...(body as object), data: kept, [SKIPPED]: skipped }
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
    { operation: request.operation, method: request.method, path: request.path, issuePath: where, requestId: raw.requestId },
  )
}

/** The {@link APIError} subclass for a response whose status is not success, secrets scrubbed. */
export function statusError(raw: ReceivedResponse, body: unknown, request: RequestSummary, redactor: Redactor): APIError {
  return apiErrorFor(errorView(raw, body, request, redactor))
}

/** A {@link ResponseValidationError} for `raw`, secrets scrubbed from path, headers, body and issues. */
export function responseValidationError(
  raw: Pick<ReceivedResponse, 'status' | 'headers' | 'requestId'>,
  request: RequestSummary,
  issues: readonly ValidationIssue[],
  redactor: Redactor,
  body: unknown,
): ResponseValidationError {
  return new ValidationErrorClass({ ...errorView(raw, body, request, redactor), issues: redactor.redactIssues(issues) })
}

/**
 * The {@link RateLimitError} of a paced call that stopped retrying 429s because the service
 * accepted no request of the client for `starvedMs` (see `rate-limit/limiter.ts`): the last 429's
 * status, headers, body and request id, and a message that says why it was not retried.
 */
export function starvedError(the429: ReceivedResponse, request: RequestSummary, starvedMs: number, redactor: Redactor): RateLimitError {
  const view = errorView(the429, decodeBody(the429), request, redactor)
  const why = `the service has answered only 429 for ${starvedMs.toLocaleString('en-US')} ms and accepted no request of this client meanwhile, so the call was not retried again (pacing: 'adaptive')`
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
  const raw = the429 ?? { status: 429, headers: {}, requestId: undefined }
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
 * What an error keeps of a response: status, method and request id as they were; path, headers
 * and body with every known secret scrubbed. Every error built from a response goes through here.
 */
function errorView(
  raw: Pick<ReceivedResponse, 'status' | 'headers' | 'requestId'>,
  body: unknown,
  request: RequestSummary,
  redactor: Redactor,
): APIErrorInit {
  return {
    status: raw.status,
    headers: redactor.redactValue(raw.headers),
    body: redactor.redactValue(body),
    method: request.method,
    path: redactor.redact(request.path),
    requestId: raw.requestId,
  }
}
