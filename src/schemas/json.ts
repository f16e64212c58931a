import * as z from 'zod'

/**
 * A plain JSON object: own string keys whose values are `null`, booleans, finite numbers, strings,
 * arrays of these, or plain objects of these (nesting allowed). Refuses `undefined`, functions,
 * symbols, bigints, `NaN`/`Infinity`, Dates, Maps, class instances and cycles, each reported at
 * its path. Used for customer-user `metadata` (spec, Resources: Customer user).
 */
export const jsonObjectSchema = z
  .custom<Record<string, unknown>>((value) => isPlainObject(value), { message: 'Expected a plain JSON object' })
  .superRefine((value, ctx) => {
    for (const problem of jsonProblems(value, [], new Set())) {
      ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message })
    }
  })

interface Problem {
  path: (string | number)[]
  message: string
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
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
        yield { path, message: 'Circular reference: JSON cannot represent it' }
        return
      }
      if (!Array.isArray(value) && !isPlainObject(value)) {
        yield {
          path,
          message: `Expected a JSON value, received an instance of ${(value as { constructor?: { name?: string } }).constructor?.name ?? 'an unknown class'}`,
        }
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
