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
  /**
   * Set when a response of the call (any attempt's, one the call then fails on included) carried
   * the service's deprecation notice: a `Deprecation` header (RFC 9745) or a `Sunset` header
   * (RFC 8594), on every call that gets one (the log says it once per operation per process); the
   * last such response's, if several did. A span can record it, so that dashboards show which operations the
   * service is retiring, and when. Header values and links have secrets scrubbed.
   */
  deprecation?: {
    /** When the service deprecated (or, if in the future, will deprecate) the operation's resource: the `Deprecation` header's date (`@1688169599`, seconds since the epoch); `undefined` when absent or not a date. */
    readonly deprecatedAt: Date | undefined
    /** When it stops answering: the `Sunset` header's HTTP date; `undefined` when absent or not a date. */
    readonly sunsetAt: Date | undefined
    /** The two headers as sent (absent ones `undefined`), for a value that is not a date. */
    readonly headers: { readonly deprecation: string | undefined; readonly sunset: string | undefined }
    /** The response's `Link` targets with relation `deprecation` or `sunset` (where the service explains), as sent. */
    readonly links: readonly { readonly rel: 'deprecation' | 'sunset'; readonly href: string }[]
  }
  /** Set by `diagnostics_channel` on failure: the error the call rejected with (secrets scrubbed, as every SDK error). */
  error?: unknown
}

/**
 * Name of the `node:diagnostics_channel` channel (a plain one, not a tracing channel) on which a
 * client publishes each change of its paced rate (see the `pacing` client option) as a
 * {@link PacingEvent}. Costs nothing while nobody subscribes.
 */
export const PACING_CHANNEL = 'chat-service-sdk:pacing'

/** A change of a client's paced rate, published on {@link PACING_CHANNEL}. */
export interface PacingEvent {
  /**
   * Why: `'lowered'` after a 429; `'raised'` while requests succeed (published when the rate has
   * grown by a tenth since the last event), or when a lowering is given back (its 429s proved one
   * operation's own limit: docs/rate-limits.md); `'shared'` when another process's rate was taken
   * from the `rateLimitStore`, or a first estimate was raised to the store's count of what all
   * processes accepted; `'ended'` when pacing ends (no 429 for 5 minutes, or the lowerings given
   * back were all there were).
   */
  readonly reason: 'lowered' | 'raised' | 'shared' | 'ended'
  /** Requests per second the client allows itself now; `undefined` once pacing ended. */
  readonly rate: number | undefined
  /** The rate of the previous event, `undefined` when pacing starts. */
  readonly previous: number | undefined
}
