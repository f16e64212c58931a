/**
 * Name of the `node:diagnostics_channel` tracing channel every SDK operation call is published on,
 * so that APM tools (OpenTelemetry, Datadog, ...) can make one span per operation. Costs nothing
 * while nobody subscribes.
 */
export const TRACING_CHANNEL = 'chat-service-sdk:request'

/**
 * The context object subscribers of {@link TRACING_CHANNEL} receive in `start`, `end`,
 * `asyncStart`, `asyncEnd` and `error`. It never holds a secret: the path is scrubbed, and the
 * result (which may hold a chat token) is not published.
 */
export interface RequestTrace {
  /** The SDK method, e.g. `'customerUsers.list'`, `'auth.issueToken'`. */
  readonly operation: string
  /** HTTP method: `'GET'`, `'POST'` or `'PUT'`. */
  readonly method: string
  /** Request path with query string, e.g. `/rest/v1/agents?page=2&limit=100`; secrets scrubbed. */
  readonly path: string
  /** Attempts made so far (1 plus retries); final once `asyncEnd` or `error` is published. */
  attempts: number
  /** HTTP status of the last response, when one arrived. */
  status?: number
  /** The last response's `x-request-id`, when sent. */
  requestId?: string
  /**
   * How the call ended, set before `asyncEnd` (and `error`) are published: `'success'`, `'error'`,
   * or `'cancelled'` for a request the SDK itself no longer needed (a prefetched or `listAll` page
   * whose loop was left): its `error` event is not a failure of yours.
   */
  outcome?: 'success' | 'error' | 'cancelled'
  /** Set by `diagnostics_channel` on failure: the error the call rejected with (secrets scrubbed, as every SDK error). */
  error?: unknown
}
