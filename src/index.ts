/**
 * chat-service-sdk: the typed Node SDK of the Chat Service management API.
 * @packageDocumentation
 */
import {} from './engine-check.ts' // first: refuses an unsupported Node.js before undici loads (see engine-check.ts)
export { ChatServiceClient } from './client.ts'
export { APIPromise } from './core/api-promise.ts'
export type { ClientOptions, ClientOverrides, ListRequestOptions, RateLimitStore, RequestOptions } from './core/options.ts'
export type { Logger } from './core/logger.ts'
export type { APIResponse } from './core/response.ts'
export { PACING_CHANNEL, TRACING_CHANNEL, type PacingEvent, type RequestTrace } from './core/tracing.ts'
export * from './errors/index.ts'
export { Page } from './pagination/page.ts'
export { PagePromise } from './pagination/page-promise.ts'
export type { resources } from './resources/resources.ts'
export { CustomerUserPage } from './resources/customer-users.ts'
export type { MessagesCheckpoint } from './pagination/checkpoint.ts'
export { MAX_SHARDS, shardOf, type Shard } from './pagination/shard.ts'
export { MessagePage, type AllMessages, type MessageListAllParams, type MessageListNewParams } from './resources/messages.ts'
export * from './schemas/index.ts'
export { VERSION } from './version.ts'
