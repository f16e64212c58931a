/** Statuses retried automatically: 408, 429, 500, 502, 503, 504. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504])

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

/**
 * The wait the server asked for, in ms, from `retry-after-ms` (milliseconds) or `Retry-After`
 * (seconds, or an HTTP date); `undefined` when neither is present or readable.
 */
export function serverRequestedDelay(headers: Readonly<Record<string, string>>, now: number = Date.now()): number | undefined {
  const ms = headers['retry-after-ms']
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms))
  const after = headers['retry-after']
  if (after === undefined) return undefined
  if (/^\s*\d+\s*$/.test(after)) return Number(after) * 1000
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
