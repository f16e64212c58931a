import type { ListRequestOptions } from '../core/options.ts'
import type { RequestPipeline } from '../internal/pipeline.ts'
import { ENDPOINTS } from '../endpoints.ts'
import { defineList, listPages } from '../pagination/list.ts'
import type { PagePromise } from '../pagination/page-promise.ts'
import { pageParamsSchema, type PageParams } from '../schemas/common.ts'
import { conversationSchema, type Conversation } from '../schemas/conversation.ts'
import { createConversationMessages, type ConversationMessages } from './messages.ts'

/** @internal `GET /rest/v1/conversations` (spec, Endpoint 5). */
export const listConversations = defineList({
  endpoint: ENDPOINTS.listConversations,
  params: pageParamsSchema,
  item: conversationSchema,
})

/** Makes `client.conversations` (internal: the class's constructor is private, see src/internal/README.md). */
export let createConversations: (pipeline: RequestPipeline) => Conversations

/** The company's conversations (spec, Endpoint 5) and their messages (Endpoint 6). Reach it as `client.conversations`. */
export class Conversations {
  /** Messages of conversations: `client.conversations.messages.list(conversationId)`, `.listAll()`. */
  readonly messages: ConversationMessages
  readonly #pipeline: RequestPipeline

  static {
    createConversations = (pipeline) => new Conversations(pipeline)
  }

  private constructor(pipeline: RequestPipeline) {
    this.#pipeline = pipeline
    this.messages = createConversationMessages(pipeline, (limit, options) =>
      pipeline.prepareList(listConversations, {}, { limit }, options),
    )
  }

  /**
   * Lists every conversation of the company: `GET /rest/v1/conversations?page&limit` (spec, Endpoint 5).
   * @param params - `page` (1-based, default 1) and `limit` (1–100, default 20).
   * @param options - {@link ListRequestOptions} of this call (each page's request; `prefetch` and `rescan` for iteration).
   * @returns A {@link PagePromise}: await it for one page, `for await` it for every conversation.
   * @throws RequestValidationError for bad params (nothing sent); AuthenticationError (401),
   * BadRequestError (400), InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError; ChatServiceError
   * once the client is closed; while iterating, UnstableListError for a list that will not hold still.
   */
  list(params: PageParams = {}, options?: ListRequestOptions): PagePromise<Conversation> {
    return listPages(this.#pipeline, listConversations, {}, params, options)
  }
}
