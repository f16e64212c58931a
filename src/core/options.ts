import type { Dispatcher } from 'undici'
import * as z from 'zod'
import type { LogLevel, Logger } from './logger.ts'
import { LOG_LEVELS } from './logger.ts'

/** Default per-attempt timeout: 60,000 ms. */
export const DEFAULT_TIMEOUT_MS = 60_000
/** Default number of retries after the first attempt: 2. */
export const DEFAULT_MAX_RETRIES = 2
/** Default cap on sockets the client's own pool opens to the service: 64. */
export const DEFAULT_CONNECTIONS = 64
/** Default cap on a response body: 32 MiB (33,554,432 bytes). */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024

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
])

/** Options of `new ChatServiceClient(options)`. */
export interface ClientOptions {
  /**
   * Where the service lives: an origin (`https://chat.example.com`) or one ending in `/rest/v1`,
   * with or without a trailing slash. Requests always go to exactly one `/rest/v1` prefix.
   * `http:` is refused unless the host is loopback or `allowInsecureHttp` is true.
   */
  baseUrl: string
  /** API key identifier (spec, Authentication 1). Sent only in the JSON body. */
  keyId: string
  /** API key secret (spec, Authentication 1). Sent only in the JSON body; never logged or shown. */
  keySecret: string
  /**
   * Deadline of each attempt in ms (default 60,000; 1 to 2,147,483,647), counted from the moment
   * the attempt starts (including any wait for a free pooled connection) to the last body byte.
   * Also the connect timeout of the client's own pool.
   */
  timeout?: number
  /** Retries after the first attempt for retryable failures (default 2; 0 disables; at most 100). */
  maxRetries?: number
  /**
   * An undici `Dispatcher` to send requests through (a proxy `ProxyAgent`, a `MockAgent`, a custom
   * `Pool`). The caller owns it: `client.close()` does not close it. Default: a keep-alive
   * `Agent` owned by the client.
   */
  dispatcher?: Dispatcher
  /**
   * Extra headers for every request. Values are Latin-1 text without control characters. Refused:
   * `content-type`, `content-length`, `host`, `transfer-encoding`, `connection`, `keep-alive`,
   * `upgrade`, `expect`, `te`, `trailer`, `proxy-connection`. `user-agent` may be replaced.
   */
  headers?: Record<string, string>
  /** Where logs go (default `console`). Any object with `debug`, `info`, `warn`, `error`. */
  logger?: Logger
  /** Least severe level logged (default `warn`, or the `CHAT_SERVICE_LOG` environment variable). */
  logLevel?: LogLevel
  /** Most sockets the client's own pool opens to the service (default 64; 1 to 65,536). Ignored with `dispatcher`. */
  connections?: number
  /** Largest response body accepted, in bytes (default 32 MiB); a larger one is cut off with `ResponseValidationError`. */
  maxResponseBytes?: number
  /** Allow an `http:` baseUrl on a non-loopback host (default false): the key secret would cross the network in clear text. */
  allowInsecureHttp?: boolean
  /** Allow construction where `window` or `document` exists (default false): the key secret belongs on servers only (spec, Authentication 4). */
  dangerouslyAllowBrowser?: boolean
}

/** Options every method takes as its last argument. They override the client's for one call. */
export interface RequestOptions {
  /** Aborts the call, during a request or a retry wait; the call rejects with `APIUserAbortError`. */
  signal?: AbortSignal
  /** Deadline of each attempt of this call in ms (1 to 2,147,483,647); see {@link ClientOptions.timeout}. */
  timeout?: number
  /** Retries for this call (0 disables, e.g. for token issuance if you prefer; at most 100). */
  maxRetries?: number
  /** Extra headers for this call, merged over the client's; same rules as {@link ClientOptions.headers}. */
  headers?: Record<string, string>
}

/** Options of list methods: {@link RequestOptions} plus page prefetch. */
export interface ListRequestOptions extends RequestOptions {
  /**
   * While iterating, how many later pages to keep in flight once the first page has told
   * `total_pages` (default 0: one page at a time; at most 32). Items still come out in page order.
   */
  prefetch?: number
}

const headersSchema = z
  .record(z.string().regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, 'Expected a valid header name'), z.string())
  .superRefine((headers, ctx) => {
    for (const name of Object.keys(headers)) {
      if (RESERVED_HEADERS.has(name.toLowerCase()))
        ctx.addIssue({ code: 'custom', path: [name], message: `The SDK sets ${name.toLowerCase()} itself` })
      if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(headers[name] ?? '')) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'Header values must be Latin-1 text without control characters or line breaks',
        })
      }
    }
  })

const timeoutSchema = z.number().int().min(1).max(2_147_483_647)
const maxRetriesSchema = z.number().int().min(0).max(100)

const loggerSchema = z.custom<Logger>(
  (value) =>
    value !== null &&
    typeof value === 'object' &&
    ['debug', 'info', 'warn', 'error'].every((method) => typeof (value as Record<string, unknown>)[method] === 'function'),
  { message: 'Expected an object with debug, info, warn and error methods' },
)

const dispatcherSchema = z.custom<Dispatcher>(
  (value) => value !== null && typeof value === 'object' && typeof (value as { dispatch?: unknown }).dispatch === 'function',
  { message: 'Expected an undici Dispatcher (Agent, Pool, ProxyAgent, MockAgent, ...)' },
)

/** Schema of {@link ClientOptions}. */
export const clientOptionsSchema = z.strictObject({
  baseUrl: z.string({ error: 'Expected baseUrl, the service URL, as a string' }).min(1, 'baseUrl is empty'),
  keyId: z.string({ error: 'Expected keyId as a string' }).min(1, 'keyId is empty'),
  keySecret: z.string({ error: 'Expected keySecret as a string' }).min(1, 'keySecret is empty'),
  timeout: timeoutSchema.optional(),
  maxRetries: maxRetriesSchema.optional(),
  dispatcher: dispatcherSchema.optional(),
  headers: headersSchema.optional(),
  logger: loggerSchema.optional(),
  logLevel: z.enum(LOG_LEVELS as [LogLevel, ...LogLevel[]]).optional(),
  connections: z.number().int().min(1).max(65_536).optional(),
  maxResponseBytes: z.number().int().min(1).optional(),
  allowInsecureHttp: z.boolean().optional(),
  dangerouslyAllowBrowser: z.boolean().optional(),
})

const requestOptionsShape = {
  signal: z.instanceof(AbortSignal, { message: 'Expected an AbortSignal' }).optional(),
  timeout: timeoutSchema.optional(),
  maxRetries: maxRetriesSchema.optional(),
  headers: headersSchema.optional(),
}

/** Schema of {@link RequestOptions}. */
export const requestOptionsSchema = z.strictObject(requestOptionsShape)

/** Schema of {@link ListRequestOptions}. */
export const listRequestOptionsSchema = z.strictObject({
  ...requestOptionsShape,
  prefetch: z.number().int().min(0).max(32).optional(),
})
