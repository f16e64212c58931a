/**
 * chat-service-sdk: the typed Node SDK of the Chat Service management API.
 * @packageDocumentation
 */
import {} from './engine-check.ts' // first: refuses an unsupported Node.js before undici loads (see engine-check.ts)
export { ChatServiceClient, ENVIRONMENT_VARIABLES } from './client.ts'
export { APIPromise } from './core/api-promise.ts'
export type {
  ClientOptions,
  ClientOverrides,
  LearnedRate,
  ListRequestOptions,
  RateLimitGrant,
  RateLimitStore,
  RateLimitTake,
  RequestOptions,
} from './core/options.ts'
export {
  DEFAULT_CONNECTIONS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  RATE_LIMIT_STORE_GET_TIMEOUT_MS,
  RATE_LIMIT_STORE_REFRESH_MS,
} from './core/options.ts'
export type { Logger, LogLevel } from './core/logger.ts'
export type { APIResponse, ResponseValidation, WithResponse } from './core/response.ts'
export { BACKOFF_BASE_MS, BACKOFF_CAP_MS, MAX_RETRY_AFTER_MS, MIN_RETRY_DELAY_MS, RETRYABLE_STATUSES } from './core/retry.ts'
export { PACING_CHANNEL, TRACING_CHANNEL, type PacingEvent, type RequestTrace } from './core/tracing.ts'
export * from './errors/index.ts'
export { Page } from './pagination/page.ts'
export { PagePromise } from './pagination/page-promise.ts'
export { Agents } from './resources/agents.ts'
export { Auth } from './resources/auth.ts'
export { Conversations } from './resources/conversations.ts'
export { CustomerUserPage, CustomerUsers, type MetadataOptions, type SkippedCustomerUser } from './resources/customer-users.ts'
export { ListAllIterable, type ListAllProgress, type ListRepairs, type MessagesRepairs, type SkippedParent } from './pagination/list-all.ts'
export { MAX_SCANS, NewMessages, type ListNewSummary } from './pagination/list-new.ts'
export type { CheckpointService, MessagesCheckpoint } from './pagination/checkpoint.ts'
export { MAX_SHARDS, shardOf, type Shard } from './pagination/shard.ts'
export {
  ConversationMessages,
  DEFAULT_LIST_ALL_CONCURRENCY,
  MessagePage,
  type AllMessages,
  type MessageListAllParams,
  type MessageListNewParams,
} from './resources/messages.ts'
export * from './schemas/index.ts'
export { VERSION } from './version.ts'
