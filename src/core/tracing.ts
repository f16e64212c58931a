/**
 * Publishes every SDK operation call on a `node:diagnostics_channel` tracing channel, so that
 * APM tools (OpenTelemetry, Datadog, ...) can make one span per operation. Costs nothing while
 * nobody subscribes.
 */
import { tracingChannel } from 'node:diagnostics_channel'

/** Name of the tracing channel every operation call is published on. */
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

const channel = tracingChannel<unknown, RequestTrace>(TRACING_CHANNEL)

/**
 * Runs `call`, published as one traced operation when anyone subscribes. `call` receives the
 * trace to fill in (`attempts`, `status`, `requestId`), or `undefined` when nobody listens.
 */
export function traced<T>(
  describe: () => Pick<RequestTrace, 'operation' | 'method' | 'path'>,
  call: (trace: RequestTrace | undefined) => Promise<T>,
): Promise<T> {
  // Not async: with nobody listening, the call's own promise is returned as it is.
  if (!channel.hasSubscribers) return call(undefined)
  return publish({ ...describe(), attempts: 0 }, call)
}

async function publish<T>(trace: RequestTrace, call: (trace: RequestTrace) => Promise<T>): Promise<T> {
  let result: T | undefined
  // The traced function resolves with nothing, so the channel never sees the result (a token).
  await channel.tracePromise(async () => {
    try {
      result = await call(trace)
      trace.outcome = 'success'
    } catch (error) {
      trace.outcome ??= 'error'
      throw error
    }
  }, trace)
  return result as T
}
