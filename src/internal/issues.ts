import type * as z from 'zod'
import { formatIssues, type ValidationIssue } from '../errors/errors.ts'

/** Issues of one union branch shown in the union issue's message; the rest are counted. */
const MAX_BRANCH_ISSUES_IN_MESSAGE = 3

/**
 * Maps zod issues to the SDK's {@link ValidationIssue} shape (symbol keys become their text). The
 * one place issues are shaped, for requests and responses alike: a union that no branch matched
 * (zod's `invalid_union`, whose own message is only "Invalid input") says why each branch failed,
 * in its message and in `branches`.
 */
export function toIssues(issues: readonly z.core.$ZodIssue[]): ValidationIssue[] {
  return issues.map(toIssue)
}

function toIssue(issue: z.core.$ZodIssue): ValidationIssue {
  const path = issue.path.map((key) => (typeof key === 'symbol' ? key.toString() : key))
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return { path, message: issue.message, code: issue.code }
  const branches = issue.errors.map((branch) => toIssues(branch))
  const labels = issue.errors.map(discriminatorOf)
  return { path, message: unionMessage(branches, labels), code: issue.code, branches }
}

/**
 * `no branch matched: branch 1 (version 2): subscription: Invalid input: expected object, received
 * undefined; branch 2 (version 1): plan: Invalid option: …`. A branch is labelled by the literal it
 * wants at a top-level key (its discriminator, usually a version), when it names one.
 */
function unionMessage(branches: readonly (readonly ValidationIssue[])[], labels: readonly (string | undefined)[]): string {
  const parts = branches.map((issues, index) => {
    const label = labels[index]
    const shown = formatIssues(issues, { max: MAX_BRANCH_ISSUES_IN_MESSAGE, root: '(value)', separator: ', ' })
    return `branch ${index + 1}${label === undefined ? '' : ` (${label})`}: ${shown}`
  })
  return `no branch matched: ${parts.join('; ')}`
}

/** `version 2` for a branch that wants the literal 2 at its top-level key `version`; else `undefined`. */
function discriminatorOf(issues: readonly z.core.$ZodIssue[]): string | undefined {
  for (const issue of issues) {
    const [key] = issue.path
    if (issue.code === 'invalid_value' && issue.path.length === 1 && typeof key !== 'symbol' && issue.values.length === 1) {
      const value = issue.values[0]
      return `${String(key)} ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`
    }
  }
  return undefined
}
