import * as z from 'zod'
import type { ListRequestOptions, RequestOptions } from '../core/options.ts'
import { requestOptionsSchema } from '../internal/options-schema.ts'
import type { PreparedList, RequestPipeline } from '../internal/pipeline.ts'
import { RequestValidationError } from '../errors/errors.ts'
import type { APIResponse } from '../core/response.ts'
import type { PageSource } from '../pagination/iterate.ts'
import { decodeCursor, ListAllIterable, PARENT_PAGE_SIZE, startPosition, type NestedSource } from '../pagination/list-all.ts'
import { defineList, listPages } from '../pagination/list.ts'
import { bindPageSource, Page } from '../pagination/page.ts'
import type { PagePromise } from '../pagination/page-promise.ts'
import { MAX_LIMIT, type Pagination } from '../schemas/common.ts'
import type { Conversation } from '../schemas/conversation.ts'
import {
  messageConversationSchema,
  messageListParamsSchema,
  messageSchema,
  type Message,
  type MessageConversation,
  type MessageListParams,
} from '../schemas/message.ts'

/** Default requests in flight of `listAll`: 8 (see its TSDoc for why). */
export const DEFAULT_LIST_ALL_CONCURRENCY = 8

/** Parameters of `conversations.messages.listAll`. */
export type MessageListAllParams = {
  /** Messages per page, 1–100 (default **100**: over a real link page size matters more than anything). */
  limit?: number | undefined
  /** Requests in flight for the whole iteration, conversation pages included: 1–64 (default 8). */
  concurrency?: number | undefined
  /** Resume right after the last message yielded before `cursor()` was called on an earlier iteration. */
  cursor?: string | undefined
}

const listAllParamsSchema = z.strictObject({
  limit: z.number().int().min(1).max(MAX_LIMIT).optional(),
  concurrency: z.number().int().min(1).max(64).optional(),
  cursor: z.string().optional(),
})

type MessagePageBody = { data: Message[]; pagination: Pagination; conversation: MessageConversation }

/** Pages of the conversation list at `limit` a page (from `Conversations`, which owns that operation). @internal */
export type ConversationPages = (limit: number, options: RequestOptions) => PreparedList<{ data: Conversation[]; pagination: Pagination }>

/** What `listAll()` returns: every message of the company; see {@link ListAllIterable}. */
export type AllMessages = ListAllIterable<Conversation, Message>

/** Makes a {@link MessagePage} (internal: its constructor is private; see src/internal/README.md). */
let createMessagePage: (body: MessagePageBody, response: APIResponse, source: PageSource<MessagePage>) => MessagePage

/** A page of messages: `data`, `pagination`, and the `conversation` (`{ id, title }`) they belong to (spec, Endpoint 6). */
export class MessagePage extends Page<Message> {
  /** The conversation these messages belong to. */
  readonly conversation: MessageConversation

  static {
    createMessagePage = (body, response, source) => bindPageSource(new MessagePage(body, response), source)
  }

  private constructor(body: MessagePageBody, response: APIResponse) {
    super(body, response)
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
  page: createMessagePage,
})

/** Messages of conversations (spec, Endpoint 6). Reach it as `client.conversations.messages`. */
export class ConversationMessages {
  readonly #pipeline: RequestPipeline
  readonly #conversationPages: ConversationPages

  /** @internal */
  constructor(pipeline: RequestPipeline, conversationPages: ConversationPages) {
    this.#pipeline = pipeline
    this.#conversationPages = conversationPages
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
    return listPages(this.#pipeline, listMessages, { conversationId }, params, options)
  }

  /**
   * Every message of every conversation of the company, in exactly the order of the nested loop
   * (conversations in the service's order, each conversation's messages oldest first), read with up
   * to `concurrency` requests in flight for the whole iteration (conversation pages included)
   * (spec, Endpoints 5 and 6; Paging rule).
   *
   * ```ts
   * const all = client.conversations.messages.listAll({ concurrency: 8 }, { signal })
   * for await (const message of all) {
   *   all.progress // { done, total }
   *   save(all.cursor())
   * }
   * for await (const m of client.conversations.messages.listAll({ cursor: saved })) { ... } // resumes
   * ```
   *
   * - Concurrency: default 8. The spec shows no rate limits, so the default stays modest: 8 pages in
   *   flight already hide most of a round trip's latency on a real link (see BENCHMARKS.md), and a
   *   429 pauses the whole client. Keep it at or below `connections` (64 by default).
   * - Memory: at most `4 × concurrency` pages of messages are held (fetched, not yet yielded),
   *   whatever the sizes; a huge conversation at the head gets the parallelism, the rest waits.
   *   Conversation pages are read ahead up to 10,000 conversations.
   * - A conversation that vanishes (404) between the list and its messages is skipped: the run goes
   *   on, the skip is logged at `warn` and listed in `skipped` with its error.
   * - Leaving the loop early aborts what is in flight and sends nothing more. An error surfaces
   *   after every message before it.
   * - Resuming: `cursor()` is an opaque string; `listAll({ cursor })` resumes right after the last
   *   message yielded before it was taken, with no gap and no duplicate when the data did not
   *   change. Offset paging cannot follow items that move: a conversation created or deleted
   *   before the cursor's position shifts the list. The SDK checks that the cursor's conversation
   *   and message are still where the cursor says (a conversation that moved within its page of
   *   100 is followed); otherwise the iteration throws ChatServiceError ("Cannot resume from this
   *   cursor ...") instead of skipping or repeating messages. Conversations created before the
   *   cursor's position after it was taken are not in the resumed part.
   * @param params - `limit` (messages per page, 1–100, default 100), `concurrency` (1–64,
   *   default 8), `cursor` (from `cursor()`; its page size must equal `limit` if you give one).
   * @param options - Per-call `signal`, `timeout` (ms), `maxRetries`, `headers`, `responseValidation`.
   * @returns A {@link ListAllIterable} of {@link Message}s with `progress`, `cursor()` and `skipped`. It iterates once.
   * @throws RequestValidationError at once for bad params or a malformed cursor (nothing sent).
   * While iterating: the errors of `conversations.list` and `conversations.messages.list` (but a
   * 404 on a conversation's messages, which skips it), and ChatServiceError for a cursor that no
   * longer matches the data.
   */
  listAll(params: MessageListAllParams = {}, options?: RequestOptions): AllMessages {
    const operation = 'conversations.messages.listAll'
    const [valid, callOptions] = this.#pipeline.check(
      operation,
      [listAllParamsSchema, params],
      [requestOptionsSchema, options ?? {}, ['options']],
    )
    const start = valid.cursor === undefined ? startPosition(valid.limit ?? MAX_LIMIT) : decodeCursor(valid.cursor, operation)
    if (valid.limit !== undefined && valid.limit !== start.limit) {
      throw new RequestValidationError(operation, [
        {
          path: ['limit'],
          code: 'custom',
          message: `The cursor was taken with limit ${start.limit}; resume with the same limit, or give none`,
        },
      ])
    }
    const limit = start.limit
    const conversations = this.#conversationPages(PARENT_PAGE_SIZE, callOptions)
    const prepared = new WeakMap<Conversation, PreparedList<MessagePageBody>>()
    const source: NestedSource<Conversation, Message> = {
      parents: async (page, signal) => (await conversations.fetch(page, signal)).data,
      children: async (conversation, page, signal) => {
        // Checked and prepared once per conversation, not per page.
        let messages = prepared.get(conversation)
        if (messages === undefined) {
          messages = this.#pipeline.prepareList(listMessages, { conversationId: conversation.id }, { limit }, callOptions)
          prepared.set(conversation, messages)
        }
        return (await messages.fetch(page, signal)).data
      },
      parentId: (conversation) => conversation.id,
      childId: (message) => message.id,
      expectedChildren: (conversation) => conversation.message_count,
      onSkip: ({ parent, error, yielded }) => {
        this.#pipeline.warn(
          `${operation}: conversation ${parent.id} vanished (404) after it was listed; skipped its ${Math.max(0, parent.message_count - yielded)} remaining messages and went on`,
          { conversationId: parent.id, status: error.status, requestId: error.requestId },
        )
      },
    }
    return new ListAllIterable(source, {
      concurrency: valid.concurrency ?? DEFAULT_LIST_ALL_CONCURRENCY,
      start,
      signal: callOptions.signal,
    })
  }
}
