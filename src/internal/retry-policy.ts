/**
 * The retry policy, whole: which failures are retried, how long to wait, and when to give up.
 * The transport asks {@link decideRetry} after every failed attempt and does what it says.
 */
import { BACKOFF_BASE_MS, BACKOFF_CAP_MS, MAX_RETRY_AFTER_MS, MIN_RETRY_DELAY_MS } from '../core/retry.ts'
import { RETRYABLE_STATUSES, serverRequestedDelay } from '../errors/retry-after.ts'
import { REDIRECT_FOLLOWED } from './exchange.ts'
import { errorCode } from './network-errors.ts'

export { serverRequestedDelay }

const RETRYABLE: ReadonlySet<number> = new Set(RETRYABLE_STATUSES)

/**
 * Network failures that fail the same way every time, by error code, so they are thrown at once:
 * an invalid argument, an unsupported header, a closed or destroyed dispatcher, a MockAgent with
 * no matching interceptor, Node's own argument errors, a TLS handshake that fails (`ERR_SSL_*`,
 * e.g. TLS spoken to a plain-HTTP port), a redirect a
 * dispatcher followed although told not to ({@link REDIRECT_FOLLOWED}), a response that starts
 * with an unsolicited `100 Continue` ({@link isUnsolicitedContinue}), and every TLS certificate problem (an
 * untrusted, self-signed, expired or misnamed certificate is the same on every attempt). Every
 * other failure before a full response (refused, reset, closed early, DNS, a network error
 * without a code) may succeed on another attempt.
 */
const FINAL_CODES =
  /^(UND_ERR_INVALID_ARG|UND_ERR_NOT_SUPPORTED|UND_ERR_DESTROYED|UND_ERR_CLOSED|UND_ERR_INVALID_RETURN_VALUE|UND_MOCK_ERR_.*|ERR_INVALID_.*|ERR_SSL_.*)$/

/** OpenSSL's certificate verification codes and Node's host-name check (`ERR_TLS_CERT_ALTNAME_INVALID`). */
const CERTIFICATE_CODES = /^(UNABLE_TO_.*|.*CERT.*)$/

/** Whether a network error is a TLS certificate problem (by its code or its causes' codes). */
export function isCertificateError(error: unknown): boolean {
  return CERTIFICATE_CODES.test(errorCode(error))
}

/**
 * Whether undici refused the response because it began with a `100 Continue` the SDK did not ask
 * for. undici 8's HTTP/1.1 parsers (llhttp and milo alike) destroy the socket on status 100 with
 * `SocketError('bad response')`, with no option to read past it (other 1xx are read past); while
 * a request is running, that is the only cause of this error. The SDK never sends
 * `Expect: 100-continue`, so such a server answers every attempt the same way.
 */
export function isUnsolicitedContinue(error: unknown): boolean {
  return errorCode(error) === 'UND_ERR_SOCKET' && error instanceof Error && error.message === 'bad response'
}

/** Whether a network error would fail the same way on every attempt (so it is neither retried nor `retryable`). */
export function failsEveryTime(error: unknown): boolean {
  const code = errorCode(error)
  return FINAL_CODES.test(code) || code === REDIRECT_FOLLOWED || isCertificateError(error) || isUnsolicitedContinue(error)
}

/** How an attempt ended, as far as the retry policy is concerned. */
export type AttemptFailure =
  | { readonly kind: 'status'; readonly status: number; readonly headers: Readonly<Record<string, string>> }
  | { readonly kind: 'network'; readonly error: unknown }

/** What to do after a failed attempt. */
export type RetryDecision =
  { readonly retry: true; readonly delayMs: number } | { readonly retry: false; readonly reason: 'final' | 'exhausted' | 'wait-too-long' }

/**
 * Decides whether attempt number `attempt` (1-based) is followed by another, and after how many ms.
 * Retried: the statuses in {@link RETRYABLE_STATUSES} and network failures that may not repeat.
 * The wait is the server's (`retry-after-ms`, `Retry-After`) when it sent one, else
 * {@link backoffDelay}, never less than {@link MIN_RETRY_DELAY_MS}; a server wait over
 * {@link MAX_RETRY_AFTER_MS} gives up at once.
 */
export function decideRetry(
  failure: AttemptFailure,
  attempt: number,
  maxRetries: number,
  random: () => number = Math.random,
): RetryDecision {
  const retryable = failure.kind === 'status' ? RETRYABLE.has(failure.status) : !failsEveryTime(failure.error)
  if (!retryable) return { retry: false, reason: 'final' }
  const requested = failure.kind === 'status' ? serverRequestedDelay(failure.headers) : undefined
  if (requested !== undefined && requested > MAX_RETRY_AFTER_MS) return { retry: false, reason: 'wait-too-long' }
  if (attempt > maxRetries) return { retry: false, reason: 'exhausted' }
  return { retry: true, delayMs: Math.max(MIN_RETRY_DELAY_MS, requested ?? backoffDelay(attempt - 1, random)) }
}

/**
 * Full-jitter exponential backoff: a uniform random wait in `[0, min(cap, base × 2^retry))` ms,
 * where `retry` is 0 for the first retry.
 */
export function backoffDelay(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry)
  return Math.floor(random() * ceiling)
}
