/** Statuses retried automatically: 408, 429, 500, 502, 503, 504 (frozen). */
export const RETRYABLE_STATUSES: readonly number[] = Object.freeze([408, 429, 500, 502, 503, 504])
const RETRYABLE = new Set(RETRYABLE_STATUSES)

/** Whether a response status is retried automatically (one of {@link RETRYABLE_STATUSES}). */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE.has(status)
}

/** First backoff step (ms) of the exponential backoff. */
export const BACKOFF_BASE_MS = 500
/** Largest backoff step (ms). */
export const BACKOFF_CAP_MS = 8_000
/** Longest server-requested wait (`Retry-After`, `retry-after-ms`) the SDK honours, in ms; longer → thrown at once. */
export const MAX_RETRY_AFTER_MS = 60_000

/**
 * Full-jitter exponential backoff: a uniform random wait in `[0, min(cap, base × 2^retry))` ms,
 * where `retry` is 0 for the first retry.
 */
export function backoffDelay(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry)
  return Math.floor(random() * ceiling)
}

/** `Sun, 06 Nov 1994 08:49:37 GMT` and the two obsolete HTTP-date forms (RFC 9110, 5.6.7). */
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /

/**
 * The wait the server asked for, in ms, from `retry-after-ms` (milliseconds, may be fractional) or
 * `Retry-After` (whole seconds, or an HTTP date); `undefined` when neither is present or readable
 * (then the SDK's own backoff applies).
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
