/**
 * The options a call is made with, as ONE resolved value, and the ONE function that merges options
 * into it.
 *
 * A call's options are the SDK's defaults, then the client's options (`new ChatServiceClient`), then
 * each `withOptions()` on the way to the client making the call, then the call's own options: each
 * layer is merged over the one before by {@link mergeOptions}. Which options are resolved, their
 * defaults and how each merges come from the option table (`option-table.ts`). What is derived from
 * the options (every request header, the log sink) is derived here, once per merge that changes it,
 * so that nothing downstream rebuilds it.
 */
import type { LogLevel } from '../core/logger.ts'
import { VERSION } from '../version.ts'
import { keysIn, OPTIONS, SCOPES_OF, type KeysIn, type ResolvedValue } from './option-table.ts'
import type { Redactor } from './redact.ts'
import { SdkLogger } from './sdk-logger.ts'

/** The names of the options resolved for every call: what a client, `withOptions` or a call may set. */
type ResolvedKey = KeysIn<(typeof SCOPES_OF.resolved)[number]>

/** Every option a layer may give that decides how a call is made (a layer's other options are ignored). */
export type CallOptionsInput = { readonly [K in ResolvedKey]?: ResolvedValue<K> | undefined }

/**
 * The options a call is made with, every one resolved (its value, or its default: see the option
 * table), and what is derived from them. Read `options.<name>` anywhere a call goes, down to
 * `exchange()`: a new option needs nothing here.
 */
export type ResolvedOptions = { readonly [K in ResolvedKey]: ResolvedValue<K> } & {
  /** Derived from `headers` and `compression`: every header of a request (see {@link requestHeaders}). */
  readonly requestHeaders: Readonly<Record<string, string>>
  /** Derived from `logger` and `logLevel`: the SDK's log sink (level, redaction, once-only messages). */
  readonly log: SdkLogger
}

/** How one option's value merges over the value before it. */
type Merge = (before: unknown, value: unknown) => unknown

/** The value given replaces the one before. */
function replace(_before: unknown, value: unknown): unknown {
  return value
}

/** Options each derived value depends on: it is derived again when one of them changes. */
const DERIVED_FROM = {
  requestHeaders: ['headers', 'compression'],
  log: ['logger', 'logLevel'],
} as const satisfies Record<string, readonly ResolvedKey[]>

/**
 * Each resolved option, its merge rule, and whether the derived values depend on it, in one array:
 * what {@link mergeOptions} walks for every layer (an option a layer does not give keeps the value
 * before).
 */
const MERGES: readonly (readonly [key: ResolvedKey, merge: Merge, headers: boolean, log: boolean])[] = keysIn(...SCOPES_OF.resolved).map(
  (key) => {
    const row = OPTIONS[key]
    const merge = 'merge' in row ? (row.merge as unknown as Merge) : replace
    const derives = (from: readonly string[]): boolean => from.includes(key)
    return [key, merge, derives(DERIVED_FROM.requestHeaders), derives(DERIVED_FROM.log)] as const
  },
)

/** The SDK's defaults, the layer every client starts from; `logLevel` is the environment's, if it says one. */
export function defaultOptions(redactor: Redactor, logLevel: LogLevel): ResolvedOptions {
  const options = Object.fromEntries(MERGES.map(([key]) => [key, OPTIONS[key].default])) as Omit<ResolvedOptions, 'requestHeaders' | 'log'>
  return { ...options, logLevel, requestHeaders: requestHeaders(options), log: new SdkLogger(options.logger, logLevel, redactor) }
}

/**
 * `before` with every option `layer` gives merged over it (see the option table), and what depends
 * on them derived again. Returns `before` itself when `layer` gives nothing, so a call without
 * options costs nothing. `layer` must have passed its schema; keys that are not resolved options
 * (`baseUrl`, `prefetch`, ...) are ignored.
 */
export function mergeOptions(before: ResolvedOptions, layer: CallOptionsInput): ResolvedOptions {
  let merged: Record<string, unknown> | undefined
  let headers = false
  let log = false
  for (const [key, merge, derivesHeaders, derivesLog] of MERGES) {
    const value = layer[key]
    if (value === undefined) continue
    merged ??= { ...before }
    merged[key] = merge(before[key], value)
    headers ||= derivesHeaders
    log ||= derivesLog
  }
  if (merged === undefined) return before
  const options = merged as unknown as ResolvedOptions
  if (headers) merged['requestHeaders'] = requestHeaders(options)
  if (log) merged['log'] = before.log.derive(options.logger, options.logLevel)
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
