/**
 * The options a call is made with, as ONE resolved value, and the ONE function that merges options
 * into it.
 *
 * A call's options are the SDK's defaults, then the client's options (`new ChatServiceClient`), then
 * each `withOptions()` on the way to the client making the call, then the call's own options: each
 * layer is merged over the one before by {@link mergeOptions}. {@link MERGE} (the key registry) says
 * how each option merges, and the compiler holds it to the public option interfaces: an option
 * added to `ClientOverrides` or `RequestOptions` and not here does not compile. What is derived from
 * the options (every request header, the log sink) is derived here, once per merge that changes it,
 * so that nothing downstream rebuilds it.
 */
import type { Logger, LogLevel } from '../core/logger.ts'
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type ClientOverrides,
  type RequestOptions,
} from '../core/options.ts'
import type { ResponseValidation } from '../core/response.ts'
import { VERSION } from '../version.ts'
import type { Redactor } from './redact.ts'
import { SdkLogger } from './sdk-logger.ts'

/** Every option that decides how a call is made: what a client may set, and what a call may set. */
export type CallOptionsInput = ClientOverrides & RequestOptions

/** The options a call is made with, every one resolved, and what is derived from them. */
export interface ResolvedOptions {
  /** Deadline of each attempt, ms. */
  readonly timeout: number
  readonly maxRetries: number
  /** Deadline of the whole call, ms; `undefined`: none. */
  readonly totalTimeout: number | undefined
  /** What a call does while the client is paused after a 429. */
  readonly rateLimitPause: 'wait' | 'fail'
  /** The lane a call's requests use while the client paces; `undefined`: by call (interactive, batch for iteration traffic). */
  readonly priority: 'interactive' | 'batch' | undefined
  /** The caller's own headers, lower-case names, each layer merged over the one before. */
  readonly headers: Readonly<Record<string, string>>
  readonly logger: Logger
  readonly logLevel: LogLevel
  /** Cap on a success body after decoding, bytes. */
  readonly maxResponseBytes: number
  readonly responseValidation: ResponseValidation
  readonly compression: boolean
  /** The call's signal (only a call sets one). */
  readonly signal: AbortSignal | undefined
  /** Derived from `headers` and `compression`: every header of a request (see {@link requestHeaders}). */
  readonly requestHeaders: Readonly<Record<string, string>>
  /** Derived from `logger` and `logLevel`: the SDK's log sink (level, redaction, once-only messages). */
  readonly log: SdkLogger
}

/** How one option's value merges over the value before it. */
type Merge<K extends keyof CallOptionsInput> = (before: ResolvedOptions[K], value: NonNullable<CallOptionsInput[K]>) => ResolvedOptions[K]

/** The value given replaces the one before. */
function replace<T>(_before: T, value: T): T {
  return value
}

/**
 * The key registry: how each option merges over the layer before it (an option a layer does not
 * give keeps the value before). Every option of `ClientOverrides` and `RequestOptions` has an entry.
 */
const MERGE: { readonly [K in keyof CallOptionsInput]-?: Merge<K> } = {
  timeout: replace,
  maxRetries: replace,
  totalTimeout: replace,
  rateLimitPause: replace,
  priority: replace,
  // Merged, not replaced: a call's `headers` add to the client's. Names are case-insensitive.
  headers: (before, value) => ({ ...before, ...lowerCaseNames(value) }),
  logger: replace,
  logLevel: replace,
  maxResponseBytes: replace,
  responseValidation: replace,
  compression: replace,
  signal: replace,
}

const KEYS = Object.keys(MERGE) as (keyof CallOptionsInput)[]

/** Options each derived value depends on: it is derived again when one of them changes. */
const DERIVED_FROM = {
  requestHeaders: ['headers', 'compression'],
  log: ['logger', 'logLevel'],
} as const satisfies Record<string, readonly (keyof CallOptionsInput)[]>

/** The SDK's defaults, the layer every client starts from. */
export function defaultOptions(redactor: Redactor, logLevel: LogLevel): ResolvedOptions {
  const options = {
    timeout: DEFAULT_TIMEOUT_MS,
    maxRetries: DEFAULT_MAX_RETRIES,
    totalTimeout: undefined,
    rateLimitPause: 'wait',
    priority: undefined,
    headers: {},
    logger: console,
    logLevel,
    maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
    responseValidation: 'strict',
    compression: true,
    signal: undefined,
  } as const
  return { ...options, requestHeaders: requestHeaders(options), log: new SdkLogger(console, logLevel, redactor) }
}

/**
 * `before` with every option `layer` gives merged over it (see {@link MERGE}), and what depends on
 * them derived again. Returns `before` itself when `layer` gives nothing, so a call without options
 * costs nothing. `layer` must have passed its schema; keys that are not call options (`baseUrl`,
 * `prefetch`, ...) are ignored.
 */
export function mergeOptions(before: ResolvedOptions, layer: Readonly<Partial<CallOptionsInput>>): ResolvedOptions {
  let merged: Record<string, unknown> | undefined
  const changed = new Set<keyof CallOptionsInput>()
  for (const key of KEYS) {
    const value = layer[key]
    if (value === undefined) continue
    merged ??= { ...before }
    merged[key] = (MERGE[key] as Merge<typeof key>)(before[key], value)
    changed.add(key)
  }
  if (merged === undefined) return before
  const options = merged as unknown as ResolvedOptions
  if (DERIVED_FROM.requestHeaders.some((key) => changed.has(key))) merged['requestHeaders'] = requestHeaders(options)
  if (DERIVED_FROM.log.some((key) => changed.has(key))) merged['log'] = before.log.derive(options.logger, options.logLevel)
  return options
}

/** `user-agent` of every request: the SDK, its version and Node's. */
const USER_AGENT = `chat-service-sdk/${VERSION} node/${process.versions.node}`

/**
 * What the SDK asks for: gzip and br. Not zstd, although Node 22.15+ has a decoder: it stops after
 * the first frame of a multi-frame body (RFC 8878 allows several), so a response could be cut
 * short without an error. A zstd body a server sends anyway is still decoded.
 */
export const ACCEPT_ENCODING = 'gzip, br'

/**
 * Every header of a request: `user-agent` (the caller's replaces the SDK's), the caller's own, then
 * the ones the SDK owns (`content-type`, `accept`, and `accept-encoding` unless compression is off),
 * which the option schemas refuse in the caller's headers.
 */
function requestHeaders(options: Pick<ResolvedOptions, 'headers' | 'compression'>): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': USER_AGENT, ...options.headers }
  headers['content-type'] = 'application/json'
  headers['accept'] = 'application/json'
  if (options.compression) headers['accept-encoding'] = ACCEPT_ENCODING
  return headers
}

function lowerCaseNames(headers: Readonly<Record<string, string>>): Record<string, string> {
  // fromEntries defines properties: a header named `__proto__` stays a header.
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))
}
