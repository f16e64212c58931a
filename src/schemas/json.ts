import * as z from 'zod'
import { madeOnce } from './made-once.ts'

/**
 * The deepest nesting of a JSON value the SDK sends or hands out: 256 levels of objects and
 * arrays. Metadata nested deeper is a RequestValidationError, nothing sent. Why 256: the SDK and
 * the code it calls (zod, a schema of yours, `JSON.stringify`, which throws `RangeError` at a few
 * thousand levels) walk JSON recursively, so some cap is needed to keep a stack overflow out of
 * reach; real data stays far below it (the spec asks for metadata kept flat where possible).
 * Parsers that cap depth choose alike: serde_json stops at 128 levels, Jackson at 1,000.
 * @internal
 */
export const MAX_JSON_DEPTH = 256

/**
 * The deepest response body the SDK reads: {@link MAX_JSON_DEPTH} plus the 4 levels a response
 * wraps a value in (the body, `data`, an item, its field), so that metadata you can send can be
 * read back. A body nested deeper is a ResponseValidationError (an error status keeps its
 * APIError), and everything the SDK shows of a response is cut at this depth.
 * @internal
 */
export const MAX_RESPONSE_DEPTH = MAX_JSON_DEPTH + 4

/**
 * A plain JSON object: own string keys whose values are `null`, booleans, finite numbers, strings,
 * arrays of these, or plain objects of these (nesting allowed, up to {@link MAX_JSON_DEPTH}
 * levels). Refuses `undefined`, functions, symbols, bigints, `NaN`/`Infinity`, Dates, Maps, class
 * instances, cycles and deeper nesting, each reported at its path. Used for customer-user
 * `metadata` (spec, Resources: Customer user).
 * @internal
 */
export const jsonObjectSchema = madeOnce(() =>
  z
    .custom<Record<string, unknown>>((value) => isPlainObject(value), { message: 'Expected a plain JSON object' })
    .superRefine((value, ctx) => {
      for (const problem of jsonProblems(value, [], new Set())) {
        ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message })
      }
    }),
)

/**
 * Any value whose objects and arrays nest at most {@link MAX_JSON_DEPTH} levels deep and do not
 * contain themselves: the guard in front of code that walks a value recursively and does not stop
 * by itself (a schema of yours, `z.lazy`), so that deep or circular input is a validation issue
 * at its path instead of a `RangeError`. Its issue ends the check (`continue: false`): what comes
 * after it never sees such a value.
 * @internal
 */
export const walkableSchema = madeOnce(() =>
  z.unknown().superRefine((value, ctx) => {
    const problem = structureProblem(value)
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message, continue: false })
  }),
)

/**
 * Whether `value` (parsed JSON, so without cycles) nests objects and arrays more than `limit`
 * levels deep. Stops at `limit`, so its own recursion is bounded; costs one visit per object and
 * array (about 3 µs for a page of 100 messages, against 26 µs for its `JSON.parse`).
 * @internal
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (limit === 0) return true
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) if (typeof item === 'object' && item !== null && nestsDeeperThan(item, limit - 1)) return true
    return false
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key]
    if (typeof item === 'object' && item !== null && nestsDeeperThan(item, limit - 1)) return true
  }
  return false
}

/**
 * Whether JSON `text` can nest objects and arrays more than `limit` levels deep. Every level is an
 * object or array of its own, opened by its own `{` or `[`: text holding at most `limit` of those
 * characters (inside strings or not) cannot, and {@link nestsDeeperThan} need not walk what it
 * parsed to. Neither can text shorter than `2 × (limit + 1)` characters (a level takes two).
 *
 * Counting costs about 200 instructions per `{` or `[` (`String#indexOf`, which skips the other
 * characters natively), the walk about 390 per object it visits: a page of 20 agents has 22
 * (issue 32). A body with more than `limit` of them is counted up to `limit + 1`, then walked.
 * @internal
 */
export function mayNestDeeperThan(text: string, limit: number): boolean {
  if (text.length < 2 * (limit + 1)) return false
  let openers = 0
  for (let at = text.indexOf('{'); at !== -1; at = text.indexOf('{', at + 1)) if (++openers > limit) return true
  for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1)) if (++openers > limit) return true
  return false
}

/** How many keys of a path an issue about nesting keeps: the rest would only repeat. */
const NESTING_PATH_KEYS = 8

/**
 * The first place where `value` nests more than `limit` levels deep or contains itself, as a
 * problem at its path (a nesting problem at the first 8 keys of its path, the level below which
 * it is too deep), or `undefined`.
 * @internal
 */
export function structureProblem(value: unknown, limit: number = MAX_JSON_DEPTH): Problem | undefined {
  return walk(value, [], new Set(), limit)
}

function walk(value: unknown, path: (string | number)[], ancestors: Set<object>, limit: number): Problem | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  if (ancestors.has(value)) return { path, message: CIRCULAR }
  if (ancestors.size === limit) return tooDeep(path, limit)
  ancestors.add(value)
  for (const [key, item] of Object.entries(value)) {
    const problem = walk(item, [...path, Array.isArray(value) ? Number(key) : key], ancestors, limit)
    if (problem !== undefined) return problem
  }
  ancestors.delete(value)
  return undefined
}

/**
 * The problem of a value nested more than `limit` levels deep, found at `path`: reported at the
 * first 8 keys of that path, the place below which it is too deep.
 * @internal
 */
export function tooDeep(path: readonly (string | number)[], limit: number = MAX_JSON_DEPTH): Problem {
  const below = path.length > NESTING_PATH_KEYS ? ' below this point' : ''
  return {
    path: path.slice(0, NESTING_PATH_KEYS),
    message: `Nested more than ${limit} levels deep${below}: JSON deeper than ${limit} levels is refused`,
  }
}

const CIRCULAR = 'Circular reference: JSON cannot represent it'

/** Something wrong inside a value, at its path. @internal */
export interface Problem {
  path: (string | number)[]
  message: string
}

/** Something wrong inside a value, at its path. @internal */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

function* jsonProblems(value: unknown, path: (string | number)[], ancestors: Set<object>): Generator<Problem> {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return
    case 'number':
      if (!Number.isFinite(value)) yield { path, message: `Expected a finite number, received ${String(value)}` }
      return
    case 'object': {
      if (value === null) return
      if (ancestors.has(value)) {
        yield { path, message: CIRCULAR }
        return
      }
      if (!Array.isArray(value) && !isPlainObject(value)) {
        yield {
          path,
          message: `Expected a JSON value, received an instance of ${(value as { constructor?: { name?: string } }).constructor?.name ?? 'an unknown class'}`,
        }
        return
      }
      // The ancestors are the levels above: a value this deep is not walked (nor sent).
      if (ancestors.size === MAX_JSON_DEPTH) {
        yield tooDeep(path)
        return
      }
      ancestors.add(value)
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) yield* jsonProblems(value[i], [...path, i], ancestors)
      } else {
        for (const key of Reflect.ownKeys(value)) {
          if (typeof key === 'symbol') {
            yield { path, message: `Symbol keys cannot be sent as JSON (${key.toString()})` }
            continue
          }
          yield* jsonProblems(value[key], [...path, key], ancestors)
        }
      }
      ancestors.delete(value)
      return
    }
    default:
      yield { path, message: `Expected a JSON value, received ${typeof value}` }
  }
}
