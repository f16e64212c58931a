/**
 * The schemas of the option objects users write (`core/options.ts`), made from the option table
 * (`option-table.ts`): each holds the rows of its scopes. The compiler holds each to its public
 * interface both ways (`satisfies`): an option of the interface without a row of a scope it holds,
 * or a row of those scopes that the interface does not declare, does not compile, naming it.
 */
import * as z from 'zod'
import type { ClientOptions, ClientOverrides, ListRequestOptions, RequestOptions } from '../core/options.ts'
import type { SchemaOf } from '../schemas/common.ts'
import { madeOnce } from '../schemas/made-once.ts'
import { keysIn, OPTIONS, SCOPES_OF, type KeysIn, type Scope } from './option-table.ts'

/** The zod shape of the rows of scopes `S`, each optional. */
type Shape<S extends Scope> = { [K in KeysIn<S>]: z.ZodOptional<ReturnType<(typeof OPTIONS)[K]['schema']>> }

/** `T`'s schema, and nothing more: a row of `S` that `T` does not declare must be `never` (an error naming it). */
type Exactly<T, S extends Scope> = SchemaOf<T> & Record<Exclude<KeysIn<S>, keyof T>, never>

function shapeOf<const S extends Scope>(scopes: readonly S[]): Shape<S> {
  return Object.fromEntries(keysIn(...scopes).map((key) => [key, OPTIONS[key].schema().optional()])) as Shape<S>
}

/** Where an option of each scope may be given: what the message of one given elsewhere says. */
const WHERE: Record<Scope, string> = {
  client: 'only to new ChatServiceClient',
  withOptions: 'to new ChatServiceClient or withOptions, not to one call',
  call: 'to new ChatServiceClient, withOptions or one call',
  callOnly: "only to one call (a method's last argument)",
  list: "only to a list method's last argument",
}

/**
 * The message of keys an option object does not take: an option of another place says where it
 * belongs (`withOptions({ pacing })`: "pacing may be given only to new ChatServiceClient"), rather
 * than zod's bare "Unrecognized key". Keys that are no option keep zod's message.
 */
function misplaced(issue: { readonly code?: string; readonly keys?: readonly string[] }): string | undefined {
  if (issue.code !== 'unrecognized_keys' || issue.keys === undefined) return undefined
  const known = issue.keys.filter((key): key is keyof typeof OPTIONS => Object.hasOwn(OPTIONS, key))
  if (known.length !== issue.keys.length) return undefined
  return known.map((key) => `${key} may be given ${WHERE[OPTIONS[key].scope]}`).join('; ')
}

/** A strict schema of `shape` whose misplaced options say where they belong. */
function optionsObject<T extends z.ZodRawShape>(shape: T): z.ZodObject<T, z.core.$strict> {
  return z.strictObject(shape, { error: misplaced })
}

// Each option schema is made on first use (madeOnce): importing builds none, `new
// ChatServiceClient` builds the client's, a call builds its options' schema only when given options.

/** Schema of {@link ClientOptions}. */
export const clientOptionsSchema = madeOnce(() =>
  optionsObject(shapeOf(SCOPES_OF.client) satisfies Exactly<ClientOptions, (typeof SCOPES_OF.client)[number]>),
)

/** Schema of {@link ClientOverrides}. */
export const clientOverridesSchema = madeOnce(() =>
  optionsObject(shapeOf(SCOPES_OF.withOptions) satisfies Exactly<ClientOverrides, (typeof SCOPES_OF.withOptions)[number]>),
)

/** Schema of {@link RequestOptions}. */
export const requestOptionsSchema = madeOnce(() =>
  optionsObject(shapeOf(SCOPES_OF.call) satisfies Exactly<RequestOptions, (typeof SCOPES_OF.call)[number]>),
)

/** Schema of {@link ListRequestOptions}. */
export const listRequestOptionsSchema = madeOnce(() =>
  optionsObject(shapeOf(SCOPES_OF.listCall) satisfies Exactly<ListRequestOptions, (typeof SCOPES_OF.listCall)[number]>),
)

/** The keys of {@link ClientOptions}. */
const CLIENT_KEYS: ReadonlySet<string> = new Set(keysIn(...SCOPES_OF.client))

/**
 * `options` as {@link clientOptionsSchema} would output them, checked without zod: when `options`
 * is a plain object whose every key is an option of `new ChatServiceClient` and every value one its
 * row `accepts` (option-table.ts). `undefined` otherwise, and for anything unusual (symbol or
 * non-enumerable keys, another prototype, an inherited key): the schema then checks them and
 * reports the issues. Well-formed options, the common case, so cost neither a schema nor the first
 * run of zod's code (issue 32).
 */
export function acceptedClientOptions(options: unknown): z.output<ReturnType<typeof clientOptionsSchema>> | undefined {
  if (options === null || typeof options !== 'object') return undefined
  const proto: unknown = Object.getPrototypeOf(options)
  if (proto !== Object.prototype && proto !== null) return undefined
  const accepted: Record<string, unknown> = {}
  let count = 0
  for (const key in options) {
    if (!Object.hasOwn(options, key) || !CLIENT_KEYS.has(key)) return undefined
    const value: unknown = (options as Record<string, unknown>)[key]
    if (value !== undefined && !OPTIONS[key as keyof typeof OPTIONS].accepts(value)) return undefined
    accepted[key] = value
    count++
  }
  // Symbol and non-enumerable keys, which `for...in` skips and the schema may read.
  if (Reflect.ownKeys(options).length !== count) return undefined
  return accepted
}
