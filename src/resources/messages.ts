import type { ListRequestOptions } from '../core/options.ts'
import type { RequestPipeline } from '../core/pipeline.ts'
import type { APIResponse } from '../core/response.ts'
import type { PageSource } from '../pagination/iterate.ts'
import { defineList, list } from '../pagination/list.ts'
import { Page } from '../pagination/page.ts'
import type { PagePromise } from '../pagination/page-promise.ts'
import type { Pagination } from '../schemas/common.ts'
import {
  messageConversationSchema,
  messageListParamsSchema,
  messageSchema,
  type Message,
  type MessageConversation,
  type MessageListParams,
} from '../schemas/message.ts'

/** A page of messages: `data`, `pagination`, and the `conversation` (`{ id, title }`) they belong to (spec, Endpoint 6). */
export class MessagePage extends Page<Message> {
  /** The conversation these messages belong to. */
  readonly conversation: MessageConversation

  /** @internal */
  constructor(
    body: { data: Message[]; pagination: Pagination; conversation: MessageConversation },
    response: APIResponse,
    source: PageSource<Page<Message>>,
  ) {
    super(body, response, source)
    this.conversation = body.conversation
  }
}

/** @internal `GET /rest/v1/conversations/:id/messages` (spec, Endpoint 6). */
export const listMessages = defineList({
  name: 'conversations.messages.list',
  path: '/conversations/{conversationId}/messages',
  params: messageListParamsSchema,
  item: messageSchema,
  extra: { conversation: messageConversationSchema },
  Page: MessagePage,
})

/** Messages of conversations (spec, Endpoint 6). Reach it as `client.conversations.messages`. */
export class ConversationMessages {
  readonly #pipeline: RequestPipeline

  /** @internal */
  constructor(pipeline: RequestPipeline) {
    this.#pipeline = pipeline
  }

  /**
   * Lists the messages of one conversation, oldest first:
   * `GET /rest/v1/conversations/:id/messages?page&limit` (spec, Endpoint 6). The id is
   * percent-encoded as one path segment.
   * @param conversationId - The conversation's `id` (non-empty).
   * @param params - `page` (1-based, default 1) and `limit` (1–100, default **50**).
   * @param options - Per-call `signal`, `timeout` (ms), `maxRetries`, `headers`, `responseValidation`, `prefetch`.
   * @returns A {@link PagePromise} of {@link MessagePage}s, each also holding `conversation`.
   * @throws RequestValidationError for bad input (nothing sent); NotFoundError (404: no such
   * conversation in this company), AuthenticationError (401), BadRequestError (400),
   * InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError; ChatServiceError
   * once the client is closed.
   */
  list(conversationId: string, params: MessageListParams = {}, options?: ListRequestOptions): PagePromise<Message, MessagePage> {
    return list(this.#pipeline, listMessages, { conversationId }, params, options)
  }
}
