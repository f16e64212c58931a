import type * as z from 'zod'
import { type APIErrorInit, RequestValidationError, ResponseValidationError, type ValidationIssue } from '../errors/index.ts'
import type { Redactor } from './redact.ts'
import type { RawResponse } from './transport.ts'

/** Maps zod issues to the SDK's {@link ValidationIssue} shape. */
export function toIssues(issues: readonly z.core.$ZodIssue[]): ValidationIssue[] {
  return issues.map((issue) => ({
    path: issue.path.map((key) => (typeof key === 'symbol' ? key.toString() : key)),
    message: issue.message,
    code: issue.code,
  }))
}

/**
 * Checks every argument of one call and throws one {@link RequestValidationError} listing every
 * problem of every argument (an empty id and a bad page are reported together). Use `check` for
 * each argument, then `done()` before sending anything.
 * @internal
 */
export class ArgumentCheck {
  readonly #operation: string
  readonly #issues: ValidationIssue[] = []

  constructor(operation: string) {
    this.#operation = operation
  }

  /**
   * Validates `value`; issues are recorded with `at` in front of their path. Returns zod's output,
   * which is only meaningful once {@link done} has returned.
   */
  check<S extends z.ZodType>(schema: S, value: unknown, at: readonly (string | number)[] = []): z.output<S> {
    const result = schema.safeParse(value)
    if (result.success) return result.data
    for (const issue of toIssues(result.error.issues)) this.#issues.push({ ...issue, path: [...at, ...issue.path] })
    return undefined as z.output<S>
  }

  /** The error listing every issue found so far, or `undefined` when every check passed. */
  error(): RequestValidationError | undefined {
    return this.#issues.length > 0 ? new RequestValidationError(this.#operation, this.#issues) : undefined
  }

  /** @throws RequestValidationError when any check failed. */
  done(): void {
    const error = this.error()
    if (error !== undefined) throw error
  }
}

/**
 * Validates caller input with `schema` and returns zod's output, or throws
 * {@link RequestValidationError} listing every issue. Runs before anything is sent.
 */
export function parseParams<S extends z.ZodType>(schema: S, input: unknown, operation: string): z.output<S> {
  const result = schema.safeParse(input)
  if (!result.success) throw new RequestValidationError(operation, toIssues(result.error.issues))
  return result.data
}

/**
 * Checks a response body against `schema` and returns the body itself (not zod's copy), so that
 * every field the service sent is kept, unknown ones included, and keys such as `__proto__` stay
 * plain own properties. Throws {@link ResponseValidationError} with the issues, status, headers and
 * raw body when it does not match.
 */
export function parseResponse<S extends z.ZodType>(schema: S, response: RawResponse, redactor: Redactor): z.output<S> {
  const result = schema.safeParse(response.body)
  if (!result.success) throw responseError(response, toIssues(result.error.issues), redactor)
  return response.body as z.output<S>
}

/**
 * What an error keeps of a response: status, method and path as they were; headers and body with
 * every known secret scrubbed. Every error built from a response goes through here.
 */
export function errorView(response: RawResponse, redactor: Redactor): APIErrorInit {
  return {
    status: response.status,
    headers: redactor.redactValue(response.headers),
    body: redactor.redactValue(response.body),
    method: response.method,
    path: response.path,
  }
}

/** Builds a {@link ResponseValidationError} for `response`, secrets scrubbed (see {@link errorView}). */
export function responseError(response: RawResponse, issues: ValidationIssue[], redactor: Redactor): ResponseValidationError {
  return new ResponseValidationError({
    ...errorView(response, redactor),
    issues: issues.map((issue) => ({ ...issue, message: redactor.redact(issue.message) })),
  })
}
