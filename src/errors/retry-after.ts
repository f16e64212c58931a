/**
 * What a response says about trying again, read the same way by the errors (`retryable`,
 * `APIError.retryAfterMs`) and by the retry policy (`src/internal/retry-policy.ts`).
 */

/** Statuses retried automatically: 408, 429, 500, 502, 503, 504 (frozen). */
export const RETRYABLE_STATUSES: readonly number[] = Object.freeze([408, 429, 500, 502, 503, 504])

/** `Sun, 06 Nov 1994 08:49:37 GMT` and the two obsolete HTTP-date forms (RFC 9110, 5.6.7). */
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /

/**
 * The wait the server asked for, in ms, from `retry-after-ms` (milliseconds, may be fractional) or
 * `Retry-After` (whole seconds, or an HTTP date, counted from `now`); `undefined` when neither is
 * present or readable (then the SDK's own backoff applies).
 */
export function serverRequestedDelay(headers: Readonly<Record<string, string>>, now: number = Date.now()): number | undefined {
  const ms = headers['retry-after-ms']?.trim()
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms))
  const after = headers['retry-after']?.trim()
  if (after === undefined) return undefined
  if (/^\d+$/.test(after)) return Number(after) * 1000
  if (!HTTP_DATE.test(after)) return undefined
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
