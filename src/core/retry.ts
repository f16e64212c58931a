export { RETRYABLE_STATUSES } from '../errors/retry-after.ts'

/** First backoff step (ms) of the exponential backoff. */
export const BACKOFF_BASE_MS = 500
/** Largest backoff step (ms). */
export const BACKOFF_CAP_MS = 8_000
/**
 * Least wait between two attempts of one call, in ms, whatever the server asks (`Retry-After: 0`)
 * or the backoff draws: a call retried 100 times cannot send more than 10 requests a second.
 */
export const MIN_RETRY_DELAY_MS = 100
/** Longest server-requested wait (`Retry-After`, `retry-after-ms`) the SDK honours, in ms; longer → thrown at once. */
export const MAX_RETRY_AFTER_MS = 60_000
