import { ChatServiceError } from '../errors/errors.ts'

/**
 * The abort reason the SDK gives when it cancels requests of its own accord (a prefetched page, or
 * a `listAll` page, whose iteration ended), so that they are not reported as the caller's abort.
 */
export const SDK_CANCELLED: unique symbol = Symbol('chat-service-sdk: cancelled, the iteration that needed it ended')

/** Errors of requests the SDK cancelled itself; see {@link isCancellation}. */
const cancellations = new WeakSet<object>()

/**
 * The error a request the SDK cancelled (reason {@link SDK_CANCELLED}) rejects with. Nobody
 * awaits it (the iteration that needed it has ended); tracing reports its call as `cancelled`.
 */
export function cancelledError(request: string): ChatServiceError {
  const error = new ChatServiceError(`Request cancelled: the iteration that needed it ended: ${request}`)
  cancellations.add(error)
  return error
}

/** Whether `error` is a request the SDK cancelled itself (see {@link cancelledError}), not a failure. */
export function isCancellation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && cancellations.has(error)
}
