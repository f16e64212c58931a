import type * as z from 'zod'
import { RequestValidationError, ResponseValidationError, type ValidationIssue } from '../errors/index.ts'
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

/** Builds a {@link ResponseValidationError} for `response` with its body scrubbed of secrets. */
export function responseError(response: RawResponse, issues: ValidationIssue[], redactor: Redactor): ResponseValidationError {
  return new ResponseValidationError({
    status: response.status,
    headers: response.headers,
    body: redactor.redactValue(response.body),
    method: response.method,
    path: response.path,
    issues: issues.map((issue) => ({ ...issue, message: redactor.redact(issue.message) })),
  })
}
