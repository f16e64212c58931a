/** Statuses retried automatically: 408, 429, 500, 502, 503, 504 (frozen). */
export const RETRYABLE_STATUSES: readonly number[] = Object.freeze([408, 429, 500, 502, 503, 504])

/** First backoff step (ms) of the exponential backoff. */
export const BACKOFF_BASE_MS = 500
/** Largest backoff step (ms). */
export const BACKOFF_CAP_MS = 8_000
/** Longest server-requested wait (`Retry-After`, `retry-after-ms`) the SDK honours, in ms; longer → thrown at once. */
export const MAX_RETRY_AFTER_MS = 60_000
