/**
 * Publishes one operation call on the tracing channel {@link TRACING_CHANNEL} (see
 * `src/core/tracing.ts` for what subscribers receive). Costs nothing while nobody subscribes.
 */
import { TRACING_CHANNEL, type RequestTrace } from '../core/tracing.ts'
import { isCancellation } from './cancellation.ts'

// Read with `process.getBuiltinModule`, not imported: an `import` of a built-in makes Node build an
// ES module facade of all its exports, a cost every process importing the SDK would pay (issue 32).
const channel = process.getBuiltinModule('node:diagnostics_channel').tracingChannel<unknown, RequestTrace>(TRACING_CHANNEL)

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
      // Decided once, here: a request the SDK cancelled itself is not a failure of the caller's.
      trace.outcome = isCancellation(error) ? 'cancelled' : 'error'
      throw error
    }
  }, trace)
  return result as T
}
