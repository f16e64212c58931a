/**
 * The schemas of the client's and each call's options (`src/core/options.ts`), held to those
 * interfaces key by key by the compiler (`satisfies SchemaOf<...>`): a field added to one and not
 * the other does not compile.
 */
import type { Dispatcher } from 'undici'
import * as z from 'zod'
import type { LogLevel, Logger } from '../core/logger.ts'
import type { ClientOptions, ClientOverrides, ListRequestOptions, RateLimitStore, RequestOptions } from '../core/options.ts'
import type { SchemaOf } from '../schemas/common.ts'
import { LOG_LEVELS } from './sdk-logger.ts'

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

/** A zod schema for each property of `T`, accepting exactly what `T` accepts there. */

const headersSchema = z
  .record(z.string().regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, 'Expected a valid header name'), z.string())
  .superRefine((headers, ctx) => {
    for (const name of Object.keys(headers)) {
      if (RESERVED_HEADERS.has(name.toLowerCase())) {
        const why = name.toLowerCase() === 'accept-encoding' ? ' (use the compression option)' : ''
        ctx.addIssue({ code: 'custom', path: [name], message: `The SDK sets ${name.toLowerCase()} itself${why}` })
      }
      if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(headers[name] ?? '')) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'Header values must be Latin-1 text without control characters or line breaks',
        })
      }
    }
  })
  .optional()

const timeoutSchema = z.number().int().min(1).max(2_147_483_647).optional()
const maxRetriesSchema = z.number().int().min(0).max(100).optional()
const rateLimitPauseSchema = z.enum(['wait', 'fail']).optional()
const prioritySchema = z.enum(['interactive', 'batch']).optional()
const responseValidationSchema = z.enum(['strict', 'warn']).optional()

const loggerSchema = z
  .custom<Logger>(
    (value) =>
      value !== null &&
      typeof value === 'object' &&
      ['debug', 'info', 'warn', 'error'].every((method) => typeof (value as Record<string, unknown>)[method] === 'function'),
    { message: 'Expected an object with debug, info, warn and error methods' },
  )
  .optional()

const dispatcherSchema = z
  .custom<Dispatcher>(
    (value) => value !== null && typeof value === 'object' && typeof (value as { dispatch?: unknown }).dispatch === 'function',
    { message: 'Expected an undici (7 or later) Dispatcher: Agent, Pool, ProxyAgent, MockAgent, ...' },
  )
  .optional()

/** A `RateLimitStore`'s `maxAgeMs`: absent, or a whole number of ms from 0 to 60,000. */
function validMaxAge(value: unknown): boolean {
  return value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 60_000)
}

const rateLimitStoreSchema = z
  .custom<RateLimitStore>(
    (value) =>
      value !== null &&
      (typeof value === 'object' || typeof value === 'function') &&
      typeof (value as { get?: unknown }).get === 'function' &&
      typeof (value as { set?: unknown }).set === 'function' &&
      ['undefined', 'function'].includes(typeof (value as { take?: unknown }).take) &&
      validMaxAge((value as { maxAgeMs?: unknown }).maxAgeMs),
    {
      message:
        'Expected a RateLimitStore: an object with get() and set(untilEpochMs) methods, take(request) if given a method too, and maxAgeMs, if given, a whole number of ms from 0 to 60,000',
    },
  )
  .optional()

const clientOptionsShape = {
  baseUrl: z
    .union([z.string().min(1, 'baseUrl is empty'), z.instanceof(URL)], { error: 'Expected baseUrl, the service URL, as a string or a URL' })
    .optional(),
  keyId: z.string({ error: 'Expected keyId as a string' }).min(1, 'keyId is empty').optional(),
  keySecret: z.string({ error: 'Expected keySecret as a string' }).min(1, 'keySecret is empty').optional(),
  timeout: timeoutSchema,
  maxRetries: maxRetriesSchema,
  totalTimeout: timeoutSchema,
  rateLimitPause: rateLimitPauseSchema,
  rateLimitStore: rateLimitStoreSchema,
  pacing: z.enum(['adaptive', 'off']).optional(),
  priority: prioritySchema,
  dispatcher: dispatcherSchema,
  headers: headersSchema,
  logger: loggerSchema,
  logLevel: z.enum(LOG_LEVELS as [LogLevel, ...LogLevel[]]).optional(),
  connections: z.number().int().min(1).max(65_536).optional(),
  maxResponseBytes: z.number().int().min(1).optional(),
  responseValidation: responseValidationSchema,
  compression: z.boolean().optional(),
  allowInsecureHttp: z.boolean().optional(),
  dangerouslyAllowBrowser: z.boolean().optional(),
} satisfies SchemaOf<ClientOptions>

/** Schema of {@link ClientOptions}. */
export const clientOptionsSchema = z.strictObject(clientOptionsShape)

/** Schema of {@link ClientOverrides}. */
export const clientOverridesSchema = z.strictObject({
  timeout: timeoutSchema,
  maxRetries: maxRetriesSchema,
  totalTimeout: timeoutSchema,
  rateLimitPause: rateLimitPauseSchema,
  priority: prioritySchema,
  headers: headersSchema,
  logger: loggerSchema,
  logLevel: clientOptionsShape.logLevel,
  maxResponseBytes: clientOptionsShape.maxResponseBytes,
  responseValidation: responseValidationSchema,
  compression: clientOptionsShape.compression,
} satisfies SchemaOf<ClientOverrides>)

const requestOptionsShape = {
  signal: z.instanceof(AbortSignal, { message: 'Expected an AbortSignal' }).optional(),
  timeout: timeoutSchema,
  maxRetries: maxRetriesSchema,
  totalTimeout: timeoutSchema,
  rateLimitPause: rateLimitPauseSchema,
  priority: prioritySchema,
  headers: headersSchema,
  responseValidation: responseValidationSchema,
} satisfies SchemaOf<RequestOptions>

/** Schema of {@link RequestOptions}. */
export const requestOptionsSchema = z.strictObject(requestOptionsShape)

/** Schema of {@link ListRequestOptions}. */
export const listRequestOptionsSchema = z.strictObject({
  ...requestOptionsShape,
  prefetch: z.number().int().min(0).max(32).optional(),
  rescan: z.boolean().optional(),
} satisfies SchemaOf<ListRequestOptions>)
