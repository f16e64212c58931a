/**
 * Checks a call's arguments before anything is sent. Every argument is checked, and one
 * {@link RequestValidationError} lists every issue of every argument (an empty id and a bad page
 * are reported together), each at its path (`['options', 'timeout']`, `['conversationId']`).
 */
import * as z from 'zod'
import { RequestValidationError, type ValidationIssue } from '../errors/errors.ts'
import { toIssues } from './issues.ts'
import type { Redactor } from './redact.ts'

/** One argument to check: its schema, its value, and where its issues go (`[]`: the root). */
export type ArgumentCheck = readonly [schema: z.ZodType, value: unknown, at?: readonly (string | number)[]]

/** The outputs of the checked arguments, in order. */
export type CheckedArguments<C extends readonly ArgumentCheck[]> = { [K in keyof C]: z.output<C[K][0]> }

/** The call being checked: its name, and the client's redactor once there is one (issues echo keys and values). */
export type CheckContext = string | { readonly operation: string; readonly redactor: Redactor }

/**
 * Returns each argument's parsed value, in order.
 * @throws RequestValidationError naming the operation, with every issue found (secrets scrubbed).
 */
export function checkArguments<const C extends readonly ArgumentCheck[]>(context: CheckContext, ...checks: C): CheckedArguments<C> {
  const outputs: unknown[] = []
  let issues: ValidationIssue[] | undefined
  for (const [schema, value, at] of checks) {
    const result = parserOf(schema)(value)
    if (result.success) outputs.push(result.data)
    else (issues ??= []).push(...toIssues(result.error.issues).map((issue) => ({ ...issue, path: [...(at ?? []), ...issue.path] })))
  }
  if (issues !== undefined) {
    if (typeof context === 'string') throw new RequestValidationError(context, issues)
    throw new RequestValidationError(context.operation, context.redactor.redactIssues(issues))
  }
  return outputs as CheckedArguments<C>
}

/** What checks each argument schema: its `safeParse` until its second use, then the compiled one. */
const parsers = new WeakMap<z.ZodType, (value: unknown) => z.ZodSafeParseResult<unknown>>()

/**
 * `schema.safeParse` for a schema's first use; from its second, the same from the parser zod 4's
 * `z.compile` generates for it: the same output as the runtime parser without the runtime's
 * per-check bookkeeping (its payload, issue arrays and context objects on every call); a value it
 * refuses goes to the runtime parser, which finds the issues. Compiling generates and compiles
 * code, which a schema used once (the client's options, at `new ChatServiceClient`) would never
 * earn back, hence the second use. A schema zod cannot compile (refinements of ours, such as ids',
 * stay on the runtime parser), a runtime that refuses generated code, or zod's `jitless` setting
 * keep `safeParse`.
 */
function parserOf(schema: z.ZodType): (value: unknown) => z.ZodSafeParseResult<unknown> {
  const parser = parsers.get(schema)
  if (parser !== undefined) return parser
  parsers.set(schema, (value) => compiledParser(schema)(value))
  return (value) => schema.safeParse(value)
}

/** `schema`'s compiled `safeParse` (kept for its later uses), or its own when it cannot be compiled. */
function compiledParser(schema: z.ZodType): (value: unknown) => z.ZodSafeParseResult<unknown> {
  let parsing: z.ZodType = schema
  if (z.config().jitless !== true) {
    try {
      parsing = z.compile(schema, { strict: true })
    } catch {
      // Not compilable (or no generated code here): the runtime parser.
    }
  }
  const parser = (value: unknown): z.ZodSafeParseResult<unknown> => parsing.safeParse(value)
  parsers.set(schema, parser)
  return parser
}
