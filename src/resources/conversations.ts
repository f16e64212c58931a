import type { ListRequestOptions } from '../core/options.ts'
import type { Transport } from '../core/transport.ts'
import { ArgumentCheck } from '../core/validate.ts'
import { list, pageSchema, plainPage } from '../pagination/list.ts'
import type { PagePromise } from '../pagination/page-promise.ts'
import { pageParamsSchema } from '../schemas/common.ts'
import { conversationSchema } from '../schemas/conversation.ts'
import type { Conversation, ConversationListParams } from '../schemas/index.ts'
import { ConversationMessages } from './messages.ts'

const conversationPage = pageSchema(conversationSchema)
/** The company's conversations (spec, Endpoint 5) and their messages (Endpoint 6). Reach it as `client.conversations`. */
export class Conversations {
  /** Messages of one conversation: `client.conversations.messages.list(conversationId)`. */
  readonly messages: ConversationMessages
  readonly #transport: Transport

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport
    this.messages = new ConversationMessages(transport)
  }

  /**
   * Lists every conversation of the company: `GET /rest/v1/conversations?page&limit` (spec, Endpoint 5).
   * @param params - `page` (1-based, default 1) and `limit` (1–100, default 20).
   * @param options - Per-call `signal`, `timeout` (ms), `maxRetries`, `headers`, `prefetch`.
   * @returns A {@link PagePromise}: await it for one page, `for await` it for every conversation.
   * @throws RequestValidationError for bad params (nothing sent); AuthenticationError (401),
   * BadRequestError (400), InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError; ChatServiceError
   * once the client is closed.
   */
  list(params: ConversationListParams = {}, options?: ListRequestOptions): PagePromise<Conversation> {
    const args = new ArgumentCheck('conversations.list')
    const valid = args.check(pageParamsSchema, params)
    return list(this.#transport, args, options, () => ({
      path: '/conversations',
      page: valid.page,
      limit: valid.limit,
      schema: conversationPage,
      makePage: plainPage,
    }))
  }
}
