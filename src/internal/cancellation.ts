/**
 * The abort reason the SDK gives when it cancels requests of its own accord (a prefetched page, or
 * a `listAll` page, whose iteration ended), so that they are not reported as the caller's abort.
 */
export const SDK_CANCELLED: unique symbol = Symbol('chat-service-sdk: cancelled, the iteration that needed it ended')
