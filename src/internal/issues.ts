import type * as z from 'zod'
import type { ValidationIssue } from '../errors/errors.ts'

/** Maps zod issues to the SDK's {@link ValidationIssue} shape (symbol keys become their text). */
export function toIssues(issues: readonly z.core.$ZodIssue[]): ValidationIssue[] {
  return issues.map((issue) => ({
    path: issue.path.map((key) => (typeof key === 'symbol' ? key.toString() : key)),
    message: issue.message,
    code: issue.code,
  }))
}
