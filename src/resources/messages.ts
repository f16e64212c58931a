import type { ListRequestOptions } from '../core/options.ts'
import type { Transport } from '../core/transport.ts'
import { encodePathSegment } from '../core/url.ts'
import { ArgumentCheck } from '../core/validate.ts'
import type { PageSource } from '../pagination/iterate.ts'
import { list, pageSchema } from '../pagination/list.ts'
import { Page } from '../pagination/page.ts'
import type { PagePromise } from '../pagination/page-promise.ts'
import type { Message, MessageConversation, MessageListParams, Pagination } from '../schemas/index.ts'
import { idSchema } from '../schemas/common.ts'
import { messageConversationSchema, messageListParamsSchema, messageSchema } from '../schemas/message.ts'

const messagePage = pageSchema(messageSchema, { conversation: messageConversationSchema })
/** A page of messages: `data`, `pagination`, and the `conversation` (`{ id, title }`) they belong to (spec, Endpoint 6). */
export class MessagePage extends Page<Message> {
  /** The conversation these messages belong to. */
  readonly conversation: MessageConversation

  /** @internal */
  constructor(data: Message[], pagination: Pagination, conversation: MessageConversation, source: PageSource<Page<Message>>) {
    super(data, pagination, source)
    this.conversation = conversation
  }
}

/** Messages of one conversation (spec, Endpoint 6). Reach it as `client.conversations.messages`. */
export class ConversationMessages {
  readonly #transport: Transport

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * Lists the messages of one conversation, oldest first:
   * `GET /rest/v1/conversations/:id/messages?page&limit` (spec, Endpoint 6). The id is
   * percent-encoded as one path segment.
   * @param conversationId - The conversation's `id` (non-empty).
   * @param params - `page` (1-based, default 1) and `limit` (1–100, default **50**).
   * @param options - Per-call `signal`, `timeout` (ms), `maxRetries`, `headers`, `prefetch`.
   * @returns A {@link PagePromise} of {@link MessagePage}s, each also holding `conversation`.
   * @throws RequestValidationError for bad input (nothing sent); NotFoundError (404: no such
   * conversation in this company), AuthenticationError (401), BadRequestError (400),
   * InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError; ChatServiceError
   * once the client is closed.
   */
  list(conversationId: string, params: MessageListParams = {}, options?: ListRequestOptions): PagePromise<Message, MessagePage> {
    const args = new ArgumentCheck('conversations.messages.list')
    const id = args.check(idSchema, conversationId, ['conversationId'])
    const valid = args.check(messageListParamsSchema, params)
    return list(this.#transport, args, options, () => ({
      path: `/conversations/${encodePathSegment(id)}/messages`,
      page: valid.page,
      limit: valid.limit,
      schema: messagePage,
      makePage: (data: Message[], pagination, extra, source) => new MessagePage(data, pagination, extra.conversation, source),
    }))
  }
}
