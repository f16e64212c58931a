/**
 * THE option table: one row per option of `new ChatServiceClient`, `withOptions` and every method's
 * last argument, saying where it may be given (its scope), what it accepts (its schema), its value
 * when nobody gives one (its default) and how a value merges over the one before it (its merge rule;
 * the value given replaces the one before unless the row says otherwise).
 *
 * Everything else about options derives from it: the zod schemas of the option objects
 * (`options-schema.ts`), the resolved options a call is made with, their defaults and their merge
 * (`resolved-options.ts`), and the client's own settings (`clientSettings`). The compiler holds it
 * to the public interfaces of `core/options.ts`, where each option is documented once for users:
 * a field there without a row here, a row without a field, or a scope that disagrees with the
 * interface that declares the field does not compile, and names the option. The docs' option
 * lists (the README's per-call options, docs/configuration.md's table) are checked against it by
 * test/docs/option-lists.test.ts.
 *
 * Adding an option: its documented field in `core/options.ts` (in the interface of its narrowest
 * scope), its row here, and the code that reads it (`options.<name>` on the resolved options a call
 * carries, down to `exchange()`; or the client's settings for a `client` option). See
 * `internal/README.md`, "Adding an option".
 */
import type { Dispatcher } from 'undici'
import * as z from 'zod'
import type { Logger, LogLevel } from '../core/logger.ts'
import {
  DEFAULT_CONNECTIONS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type ClientOptions,
  type ListRequestOptions,
  type RateLimitStore,
} from '../core/options.ts'
import { LOG_LEVELS } from './sdk-logger.ts'

/**
 * Where an option may be given; each scope includes the ones after it in this list, except the
 * last two:
 *
 * - `call`: `new ChatServiceClient`, `withOptions` and every method's last argument (`timeout`);
 * - `withOptions`: `new ChatServiceClient` and `withOptions` (`logger`);
 * - `client`: `new ChatServiceClient` only: a setting of the client and the clients derived from
 *   it, read once (`dispatcher`);
 * - `callOnly`: every method's last argument only (`signal`);
 * - `list`: list methods' last argument only (`prefetch`, `rescan`), read by the pipeline.
 *
 * The options of the first two and `callOnly` are resolved for every call (`ResolvedOptions`).
 */
export type Scope = 'call' | 'withOptions' | 'client' | 'callOnly' | 'list'

/** Every option users may give anywhere, as they write it. */
type AllOptions = ClientOptions & ListRequestOptions

/**
 * What an option accepts, twice: as a zod schema (made on first use: a module-level schema is paid
 * for by every process that imports the SDK), and as `accepts`, a check without zod that a value
 * can be taken as given. `accepts` says yes only to values the schema accepts and outputs
 * unchanged (test/core/option-accepts.test.ts holds each row to it); it may say no to more,
 * which then go to the schema, whose issues are the ones reported. It lets `new
 * ChatServiceClient` take well-formed options without building a schema or loading zod's code:
 * most of what constructing a client used to cost (issue 32).
 */
interface Accepts<T> {
  /** What users may give (`undefined` aside: every option may be left out). */
  readonly schema: () => z.ZodType<T>
  /** Whether `value` is one the schema accepts and outputs as it is; no: the schema decides. */
  readonly accepts: (value: unknown) => boolean
}

/** One row: an option of type `T` (as given, without `undefined`). */
interface Row<T> extends Accepts<T> {
  readonly scope: Scope
  /** Its value when no layer gives one; `undefined`: none (the option stays `undefined`). */
  readonly default: T | undefined
  /** How a value given merges over the one before it; default: it replaces it. */
  readonly merge?: (before: T, value: T) => T
}

/**
 * Header names a caller's `headers` may not set: the ones the SDK sets itself, and the ones that
 * would change how the connection works (undici refuses them).
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'host',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
  'accept',
  'accept-encoding',
])

/** A header name (an HTTP token), as `headers` takes it. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** A header value: Latin-1 text without control characters or line breaks. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

const headersSchema = (): z.ZodType<Record<string, string>> =>
  z.record(z.string().regex(HEADER_NAME, 'Expected a valid header name'), z.string()).superRefine((headers, ctx) => {
    for (const name of Object.keys(headers)) {
      if (RESERVED_HEADERS.has(name.toLowerCase())) {
        const why = name.toLowerCase() === 'accept-encoding' ? ' (use the compression option)' : ''
        ctx.addIssue({ code: 'custom', path: [name], message: `The SDK sets ${name.toLowerCase()} itself${why}` })
      }
      if (!HEADER_VALUE.test(headers[name] ?? '')) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'Header values must be Latin-1 text without control characters or line breaks',
        })
      }
    }
  })

/**
 * Headers that need no reporting: a plain object of own, enumerable string keys, each a valid name
 * the SDK does not set itself, with Latin-1 string values. Stricter than the schema where the two
 * could differ (symbol keys, `__proto__`, any prototype but `Object.prototype`): those go to the schema.
 */
function plainHeaders(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false
  if (Object.getPrototypeOf(value) !== Object.prototype) return false
  const keys = Reflect.ownKeys(value)
  if (keys.length !== Object.keys(value).length) return false
  for (const name of keys) {
    if (typeof name !== 'string' || name === '__proto__' || !HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase()))
      return false
    const header = (value as Record<string, unknown>)[name]
    if (typeof header !== 'string' || !HEADER_VALUE.test(header)) return false
  }
  return true
}

/** A whole number from `min` to `max` (a safe integer, as zod's `int()` wants). */
function wholeNumber(min: number, max: number = Number.MAX_SAFE_INTEGER): Accepts<number> {
  return {
    schema: () => z.number().int().min(min).max(max),
    accepts: (value) => Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max,
  }
}

/** One of `values`. */
function oneOf<const T extends string>(values: readonly [T, ...T[]]): Accepts<T> {
  return { schema: () => z.enum(values), accepts: (value) => (values as readonly unknown[]).includes(value) }
}

/** `true` or `false`. */
const BOOLEAN: Accepts<boolean> = { schema: () => z.boolean(), accepts: (value) => typeof value === 'boolean' }

/** What `is` says yes to; `message` otherwise. */
function custom<T>(is: (value: unknown) => boolean, message: string): Accepts<T> {
  return { schema: () => z.custom<T>(is, { message }), accepts: is }
}

/** A non-empty string; `typeMessage` for another type, `emptyMessage` for `''`. */
function nonEmptyString(typeMessage: string, emptyMessage: string): Accepts<string> {
  return {
    schema: () => z.string({ error: typeMessage }).min(1, emptyMessage),
    accepts: (value) => typeof value === 'string' && value.length > 0,
  }
}

/** A timer's longest delay in Node.js, ms (2^31 - 1). */
const TIMEOUT = wholeNumber(1, 2_147_483_647)

const LOGGER = custom<Logger>(
  (value) =>
    value !== null &&
    typeof value === 'object' &&
    ['debug', 'info', 'warn', 'error'].every((method) => typeof (value as Record<string, unknown>)[method] === 'function'),
  'Expected an object with debug, info, warn and error methods',
)

const DISPATCHER = custom<Dispatcher>(
  (value) => value !== null && typeof value === 'object' && typeof (value as { dispatch?: unknown }).dispatch === 'function',
  'Expected an undici (7 or later) Dispatcher: Agent, Pool, ProxyAgent, MockAgent, ...',
)

/** A `RateLimitStore`'s `maxAgeMs`: absent, or a whole number of ms from 0 to 60,000. */
function validMaxAge(value: unknown): boolean {
  return value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 60_000)
}

const RATE_LIMIT_STORE = custom<RateLimitStore>(
  (value) =>
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { get?: unknown }).get === 'function' &&
    typeof (value as { set?: unknown }).set === 'function' &&
    ['undefined', 'function'].includes(typeof (value as { take?: unknown }).take) &&
    validMaxAge((value as { maxAgeMs?: unknown }).maxAgeMs),
  'Expected a RateLimitStore: an object with get() and set(untilEpochMs) methods, take(request) if given a method too, and maxAgeMs, if given, a whole number of ms from 0 to 60,000',
)

/** Header names are case-insensitive: kept lower-case. */
function lowerCaseNames(headers: Readonly<Record<string, string>>): Record<string, string> {
  // fromEntries defines properties: a header named `__proto__` stays a header.
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))
}

/** The table. Its order is the order the schemas list the options in. */
export const OPTIONS = {
  // new ChatServiceClient only. baseUrl, keyId and keySecret fall back to the environment
  // (client.ts), logLevel to CHAT_SERVICE_LOG.
  baseUrl: {
    scope: 'client',
    schema: () =>
      z.union([z.string().min(1, 'baseUrl is empty'), z.instanceof(URL)], {
        error: 'Expected baseUrl, the service URL, as a string or a URL',
      }),
    accepts: (value) => (typeof value === 'string' && value.length > 0) || value instanceof URL,
    default: undefined,
  },
  keyId: { scope: 'client', ...nonEmptyString('Expected keyId as a string', 'keyId is empty'), default: undefined },
  keySecret: { scope: 'client', ...nonEmptyString('Expected keySecret as a string', 'keySecret is empty'), default: undefined },
  timeout: { scope: 'call', ...TIMEOUT, default: DEFAULT_TIMEOUT_MS },
  maxRetries: { scope: 'call', ...wholeNumber(0, 100), default: DEFAULT_MAX_RETRIES },
  totalTimeout: { scope: 'call', ...TIMEOUT, default: undefined },
  rateLimitPause: { scope: 'call', ...oneOf(['wait', 'fail']), default: 'wait' },
  // undefined: by call (the pipeline: interactive, batch for iteration traffic).
  priority: { scope: 'call', ...oneOf(['interactive', 'batch']), default: undefined },
  rateLimitStore: { scope: 'client', ...RATE_LIMIT_STORE, default: undefined },
  pacing: { scope: 'client', ...oneOf(['adaptive', 'off']), default: 'adaptive' },
  dispatcher: { scope: 'client', ...DISPATCHER, default: undefined },
  // Merged, not replaced: a call's `headers` add to the client's.
  headers: {
    scope: 'call',
    schema: headersSchema,
    accepts: plainHeaders,
    default: {},
    merge: (before, value) => ({ ...before, ...lowerCaseNames(value) }),
  },
  logger: { scope: 'withOptions', ...LOGGER, default: console },
  logLevel: { scope: 'withOptions', ...oneOf(LOG_LEVELS as [LogLevel, ...LogLevel[]]), default: 'warn' },
  connections: { scope: 'client', ...wholeNumber(1, 65_536), default: DEFAULT_CONNECTIONS },
  maxResponseBytes: { scope: 'withOptions', ...wholeNumber(1), default: DEFAULT_MAX_RESPONSE_BYTES },
  responseValidation: { scope: 'call', ...oneOf(['strict', 'warn']), default: 'strict' },
  compression: { scope: 'withOptions', ...BOOLEAN, default: true },
  allowInsecureHttp: { scope: 'client', ...BOOLEAN, default: false },
  dangerouslyAllowBrowser: { scope: 'client', ...BOOLEAN, default: false },
  signal: {
    scope: 'callOnly',
    ...custom<AbortSignal>((value) => value instanceof AbortSignal, 'Expected an AbortSignal'),
    default: undefined,
  },
  prefetch: { scope: 'list', ...wholeNumber(0, 32), default: 0 },
  rescan: { scope: 'list', ...BOOLEAN, default: false },
} as const satisfies { readonly [K in keyof AllOptions]-?: Row<NonNullable<AllOptions[K]>> }

type Rows = typeof OPTIONS

/** The names of the options whose scope is one of `S`. */
export type KeysIn<S extends Scope> = { [K in keyof Rows]: Rows[K]['scope'] extends S ? K : never }[keyof Rows]

/** An option's value once resolved: as given, or its default (`undefined` only for an option without one). */
export type ResolvedValue<K extends keyof Rows> = NonNullable<AllOptions[K]> | (undefined extends Rows[K]['default'] ? undefined : never)

/** The names of the options of `scopes`, in the table's order. */
export function keysIn<S extends Scope>(...scopes: S[]): KeysIn<S>[] {
  return (Object.keys(OPTIONS) as (keyof Rows)[]).filter((key): key is KeysIn<S> => (scopes as Scope[]).includes(OPTIONS[key].scope))
}

/** Scopes of the option objects users write: which rows each one holds. */
export const SCOPES_OF = {
  /** `new ChatServiceClient(options)`: {@link ClientOptions}. */
  client: ['client', 'withOptions', 'call'],
  /** `client.withOptions(overrides)`: `ClientOverrides`. */
  withOptions: ['withOptions', 'call'],
  /** A method's last argument: `RequestOptions`. */
  call: ['call', 'callOnly'],
  /** A list method's last argument: {@link ListRequestOptions}. */
  listCall: ['call', 'callOnly', 'list'],
  /** What every call resolves (`ResolvedOptions`). */
  resolved: ['withOptions', 'call', 'callOnly'],
} as const satisfies Record<string, readonly Scope[]>

/** What a client made with `new` is set up with, read once: the `client` options, defaults filled in. */
export type ClientSettings = { readonly [K in KeysIn<'client'>]: ResolvedValue<K> }

const CLIENT_KEYS = keysIn('client')

/** The {@link ClientSettings} of checked client options. */
export function clientSettings(options: Readonly<Pick<ClientOptions, KeysIn<'client'>>>): ClientSettings {
  return Object.fromEntries(CLIENT_KEYS.map((key) => [key, options[key] ?? OPTIONS[key].default])) as ClientSettings
}
