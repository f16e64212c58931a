import * as z from 'zod'
import type { ListRequestOptions, RequestOptions } from '../core/options.ts'
import { requestOptionsSchema } from '../internal/options-schema.ts'
import type { PreparedList, RequestPipeline } from '../internal/pipeline.ts'
import { RequestValidationError, type ResponseValidationError, type ValidationIssue } from '../errors/errors.ts'
import type { APIResponse, WithResponse } from '../core/response.ts'
import {
  checkpointIssues,
  identityIssues,
  mergeCheckpoints,
  type ConversationCheckpoint,
  type MessagesCheckpoint,
} from '../pagination/checkpoint.ts'
import type { PageSource } from '../pagination/iterate.ts'
import { createListAll, decodeCursor, startPosition, type ListAllIterable } from '../pagination/list-all.ts'
import { createListNew, type NewMessages } from '../pagination/list-new.ts'
import type { FetchedPage } from '../pagination/list-scan.ts'
import { PARENT_PAGE_SIZE, type NestedReader, type PageOf } from '../pagination/nested.ts'
import { pageIssues } from '../pagination/rules.ts'
import { shardFilter, shardSchema, type Shard } from '../pagination/shard.ts'
import { ENDPOINTS } from '../endpoints.ts'
import { defineList, describeRepairs, listPages, unstableList } from '../pagination/list.ts'
import { bindPageSource, Page } from '../pagination/page.ts'
import type { PagePromise } from '../pagination/page-promise.ts'
import { idProblem, MAX_LIMIT, type PageParams, type Pagination, type SchemaOf } from '../schemas/common.ts'
import type { Conversation } from '../schemas/conversation.ts'
import { madeOnce } from '../schemas/made-once.ts'
import {
  messageConversationSchema,
  messageListParamsSchema,
  messageSchema,
  type Message,
  type MessageConversation,
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
  /** Read only the conversations of this shard (see {@link shardOf}). A cursor remembers its shard: give the same one with it, or none. */
  shard?: Shard | undefined
  /**
   * Scan the conversation list a second time once the first scan ends, and read the conversations
   * only the second lists (default true): a conversation deleted before the scan's position while
   * another is created after it keeps the list's `total`, and one scan cannot see that it moved
   * past a conversation. It costs `ceil(conversations / 100)` requests, under 2 % of an export.
   */
  rescan?: boolean | undefined
}

/** Parameters of `conversations.messages.listNew`. */
export type MessageListNewParams = {
  /**
   * Where the last run got to: what its `checkpoint()` returned, or an array of them (one per
   * shard, merged per conversation: the one that read further wins). None: a first run, which
   * yields every message.
   */
  checkpoint?: MessagesCheckpoint | readonly MessagesCheckpoint[] | undefined
  /** Messages per page, 1–100 (default 100). The checkpoint does not depend on it. */
  limit?: number | undefined
  /** Requests in flight for the whole run, conversation pages included: 1–64 (default 8). */
  concurrency?: number | undefined
  /** Read only the conversations of this shard (see {@link shardOf}); the checkpoint returned holds only them. */
  shard?: Shard | undefined
  /**
   * Called once for each conversation the scan lists (of this shard), as it is listed, with the
   * conversation as the service sent it: a job that stores conversations takes them here, with no
   * second listing. Each conversation once, even when the list moves (or is scanned twice); an
   * error it throws ends the run (it surfaces after the messages before it).
   */
  onConversation?: ((conversation: Conversation) => void) | undefined
}

const limitSchema = madeOnce(() => z.number().int().min(1).max(MAX_LIMIT).optional())
const concurrencySchema = madeOnce(() => z.number().int().min(1).max(64).optional())

const listAllParamsSchema = madeOnce(() =>
  z.strictObject({
    limit: limitSchema(),
    concurrency: concurrencySchema(),
    cursor: z.string().optional(),
    shard: shardSchema().optional(),
    rescan: z.boolean().optional(),
  } satisfies SchemaOf<MessageListAllParams>),
)

const listNewParamsSchema = madeOnce(() =>
  z.strictObject({
    // Checked by hand: a million entries would be slow through a zod schema of each.
    checkpoint: z
      .unknown()
      .superRefine((value, ctx) => {
        if (value === undefined) return
        for (const issue of checkpointIssues(value)) ctx.addIssue({ code: 'custom', path: [...issue.path], message: issue.message })
      })
      .optional() as z.ZodType<MessageListNewParams['checkpoint']>,
    limit: limitSchema(),
    concurrency: concurrencySchema(),
    shard: shardSchema().optional(),
    onConversation: z
      .custom<(conversation: Conversation) => void>((value) => typeof value === 'function', { message: 'Expected a function' })
      .optional(),
  } satisfies SchemaOf<MessageListNewParams>),
)

type MessagePageBody = { data: Message[]; pagination: Pagination; conversation: MessageConversation }

/** Pages of the conversation list at `limit` a page (from `Conversations`, which owns that operation). @internal */
export type ConversationPages = (limit: number, options: RequestOptions) => PreparedList<{ data: Conversation[]; pagination: Pagination }>

/** What `listAll()` returns: every message of the company, with `progress`, `cursor()` and `skipped` (the class `resources.ListAllIterable`). */
export type AllMessages = ListAllIterable<Conversation, Message>

/** Makes a {@link MessagePage} (internal: its constructor is private; see src/internal/README.md). */
let createMessagePage: (body: MessagePageBody, response: APIResponse, context: { readonly source: PageSource<MessagePage> }) => MessagePage

/** A page of messages: `data`, `pagination`, and the `conversation` (`{ id, title }`) they belong to (spec, Endpoint 6). */
export class MessagePage extends Page<Message> {
  /** The conversation these messages belong to. */
  readonly conversation: {
    /** The conversation's id. */
    readonly id: string
    /** The conversation's title. */
    readonly title: string
  }

  static {
    createMessagePage = (body, response, { source }) => bindPageSource(new MessagePage(body, response), source)
  }

  private constructor(body: MessagePageBody, response: APIResponse) {
    super(body, response)
    this.conversation = body.conversation
  }
}

/** @internal `GET /rest/v1/conversations/:id/messages` (spec, Endpoint 6). */
export const listMessages = defineList({
  endpoint: ENDPOINTS.listMessages,
  params: messageListParamsSchema,
  item: messageSchema,
  extra: () => ({ conversation: messageConversationSchema() }),
  page: createMessagePage,
})

/** Makes `client.conversations.messages` (internal: the class's constructor is private, see src/internal/README.md). */
export let createConversationMessages: (pipeline: RequestPipeline, conversationPages: ConversationPages) => ConversationMessages

/** Messages of conversations (spec, Endpoint 6). Reach it as `client.conversations.messages`. */
export class ConversationMessages {
  readonly #pipeline: RequestPipeline
  readonly #conversationPages: ConversationPages

  static {
    createConversationMessages = (pipeline, conversationPages) => new ConversationMessages(pipeline, conversationPages)
  }

  private constructor(pipeline: RequestPipeline, conversationPages: ConversationPages) {
    this.#pipeline = pipeline
    this.#conversationPages = conversationPages
  }

  /**
   * Lists the messages of one conversation, oldest first:
   * `GET /rest/v1/conversations/:id/messages?page&limit` (spec, Endpoint 6). The id is
   * percent-encoded as one path segment.
   * @param conversationId - The conversation's `id` (non-empty).
   * @param params - `page` (1-based, default 1) and `limit` (1–100, default **50**).
   * @param options - {@link ListRequestOptions} of this call (each page's request; `prefetch` and `rescan` for iteration).
   * @returns A {@link PagePromise} of {@link MessagePage}s, each also holding `conversation`.
   * @throws RequestValidationError for bad input (nothing sent); NotFoundError (404: no such
   * conversation in this company), AuthenticationError (401), BadRequestError (400),
   * InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError; ChatServiceError
   * once the client is closed; while iterating, UnstableListError for a list that will not hold still.
   */
  list(conversationId: string, params: PageParams = {}, options?: ListRequestOptions): PagePromise<Message, MessagePage> {
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
   *   cursor ...", a StaleCursorError) instead of skipping or repeating messages. Conversations created before the
   *   cursor's position after it was taken are not in the resumed part. A cursor taken in the
   *   conversations only the second scan found (they come last) holds them and resumes in them.
   * @param params - `limit` (messages per page, 1–100, default 100), `concurrency` (1–64,
   *   default 8), `cursor` (from `cursor()`; it resumes with its own page size and shard: a `limit`
   *   or `shard` given with it must be the same), `shard` (`{ index, count }`: only the conversations
   *   of that shard, see {@link shardOf}), `rescan` (default true: scan the conversation list a second
   *   time; README, "Lists that move").
   * @param options - {@link RequestOptions} for every request it makes.
   * @returns A {@link ListAllIterable} of {@link Message}s with `progress`, `cursor()` and `skipped`. It iterates once.
   * @throws RequestValidationError at once for bad params or a malformed cursor (nothing sent).
   * While iterating: the errors of `conversations.list` and `conversations.messages.list` (but a
   * 404 on a conversation's messages, which skips it), ChatServiceError for a cursor that no
   * longer matches the data, and UnstableListError for data that will not hold still.
   */
  listAll(params: MessageListAllParams = {}, options?: RequestOptions): AllMessages {
    const operation = 'conversations.messages.listAll'
    const [valid, callOptions] = this.#pipeline.check(
      operation,
      [listAllParamsSchema(), params],
      [requestOptionsSchema(), options ?? {}, ['options']],
    )
    const start = valid.cursor === undefined ? startPosition(valid.limit ?? MAX_LIMIT, valid.shard) : decodeCursor(valid.cursor, operation)
    // A cursor resumes with what it was taken with: the same page size and shard (or none given).
    const mismatch: ValidationIssue[] = []
    if (valid.limit !== undefined && valid.limit !== start.limit) {
      mismatch.push({
        path: ['limit'],
        code: 'custom',
        message: `The cursor was taken with limit ${start.limit}; resume with the same limit, or give none`,
      })
    }
    if (valid.shard !== undefined && (valid.shard.index !== start.shard?.index || valid.shard.count !== start.shard.count)) {
      const taken = start.shard === undefined ? 'without a shard' : `with shard ${start.shard.index} of ${start.shard.count}`
      mismatch.push({ path: ['shard'], code: 'custom', message: `The cursor was taken ${taken}; resume with the same shard, or give none` })
    }
    if (mismatch.length > 0) throw new RequestValidationError(operation, mismatch)
    return createListAll(this.#reader(operation, start.limit, callOptions), {
      concurrency: valid.concurrency ?? DEFAULT_LIST_ALL_CONCURRENCY,
      start,
      signal: callOptions.signal,
      shard: shardFilter(start.shard),
      rescan: valid.rescan ?? true,
      onSkip: ({ parent, error, yielded }) => {
        this.#pipeline.warn(
          `${operation}: conversation ${parent.id} vanished (404) after it was listed; skipped its ${Math.max(0, parent.message_count - yielded)} remaining messages and went on`,
          { conversationId: parent.id, status: error.status, requestId: error.requestId },
        )
      },
      unstable: (list, report) =>
        unstableList(`${operation} (${list === 'conversations' ? 'the conversation list' : 'the messages of a conversation'})`, report),
      repaired: ({ conversations, messages }) => {
        this.#pipeline.warn(
          `${operation}: the conversation list: ${describeRepairs(conversations)}; the messages of the conversations read: ${describeRepairs(messages)}`,
          { conversations, messages },
        )
      },
      // The message pages' pace (the conversation list is read ahead, beside them).
      pacedRate: () => this.#pipeline.pacedRateOf(ENDPOINTS.listMessages.name),
    })
  }

  /**
   * Only the messages added since a checkpoint: the nightly export that reads what is new, not the
   * whole history (spec, Endpoints 5 and 6; Paging rule). Without a checkpoint (a first run) it
   * yields every message, like {@link ConversationMessages.listAll}.
   *
   * ```ts
   * const changes = client.conversations.messages.listNew({ checkpoint: saved }, { signal })
   * for await (const message of changes) write(message)
   * save(changes.checkpoint()) // plain JSON; valid at any moment, mid-run included
   * changes.summary            // { new, grown, unchanged, rewound, deleted, scans, complete }
   * ```
   *
   * How it knows what is new: it scans the conversation list (100 a page) and compares each
   * conversation's `message_count` and `updated_at` with its checkpoint entry. Unchanged ones cost
   * no request (a night with nothing new costs exactly the scan, `ceil(conversations / 100)`
   * requests); a grown one costs the pages from the one holding the last message read, whose id is
   * checked before anything after it is yielded. A conversation whose last message read is not
   * where it was, or that has fewer messages than were read, is read again from its first message
   * (`summary.rewound`: at-least-once, its messages may repeat; de-duplicate by message id). A
   * conversation whose `message_count` and `updated_at` both stay as they were is not read: the
   * spec does not say whether `updated_at` moves when a message is added or deleted, so a change
   * that keeps both (a message deleted and another added, with `updated_at` untouched) is not seen.
   *
   * - Order: the nested loop over the conversations that have something new (conversations in the
   *   list's order, each one's messages oldest first); conversations found by a later scan come last.
   * - Data that moves: every list it reads is read exactly once while it moves (README, "Lists that
   *   move"); the conversation list a second time when the first scan saw it move or did not list a
   *   conversation of the checkpoint. Deleted conversations are reported only when no scan listed them.
   * - Concurrency, bounded read-ahead, leaving the loop early, abort and error order: as
   *   {@link ConversationMessages.listAll}. A conversation that vanishes (404) counts as deleted.
   * @param params - `checkpoint` (one or an array, from `checkpoint()`: of this client's service
   *   and key), `limit` (messages per page, 1–100, default 100), `concurrency` (1–64, default 8),
   *   `shard` (`{ index, count }`), `onConversation` (each conversation the scan lists, once).
   * @param options - {@link RequestOptions} for every request it makes.
   * @returns A {@link NewMessages}: the new {@link Message}s, with `progress`, `summary` and
   *   `checkpoint()`. It iterates once.
   * @throws RequestValidationError at once for bad params, a malformed checkpoint, or one made with
   * another service or key (nothing sent).
   * While iterating: the errors of `conversations.list` and `conversations.messages.list` (but a
   * 404 on a conversation's messages), and ResponseValidationError for pages that break the
   * paging rules.
   */
  listNew(params: MessageListNewParams = {}, options?: RequestOptions): NewMessages {
    const operation = 'conversations.messages.listNew'
    const [valid, callOptions] = this.#pipeline.check(
      operation,
      [listNewParamsSchema(), params],
      [requestOptionsSchema(), options ?? {}, ['options']],
    )
    const shard = shardFilter(valid.shard)
    const service = this.#pipeline.service
    if (valid.checkpoint !== undefined) {
      // Another service's or company's positions would be read as this one's: refused before anything is sent.
      const { issues, anonymous } = identityIssues(valid.checkpoint, service)
      if (issues.length > 0)
        throw new RequestValidationError(
          operation,
          issues.map((issue) => ({ ...issue, path: ['checkpoint', ...issue.path] })),
        )
      if (anonymous > 0) {
        this.#pipeline.warn(
          `${operation}: ${anonymous === 1 ? 'the checkpoint does' : `${anonymous} of the checkpoints do`} not record the service and key ${anonymous === 1 ? 'it was' : 'they were'} made with (made by 0.3): taken as ${service.baseUrl} with key ${service.keyId}; the checkpoint this run returns records them`,
          { ...service, anonymous },
        )
      }
    }
    const entries =
      valid.checkpoint === undefined
        ? new Map<string, ConversationCheckpoint>()
        : mergeCheckpoints(valid.checkpoint, shard === undefined ? undefined : (id) => shard.has(id))
    const limit = valid.limit ?? MAX_LIMIT
    return createListNew(this.#reader(operation, limit, callOptions), {
      limit,
      service,
      concurrency: valid.concurrency ?? DEFAULT_LIST_ALL_CONCURRENCY,
      entries,
      signal: callOptions.signal,
      shard,
      warn: (message, fields) => {
        this.#pipeline.warn(message, fields)
      },
      onConversation: valid.onConversation,
      unstable: (report) => unstableList(`${operation} (the messages of a conversation)`, report),
      describe: describeRepairs,
      // The message pages' pace (the conversation list is read ahead, beside them).
      pacedRate: () => this.#pipeline.pacedRateOf(ENDPOINTS.listMessages.name),
    })
  }

  /**
   * What listAll and listNew read: conversation pages at 100 a page and message pages at `limit`,
   * each checked as it arrives (the paging rules 1–3 of pagination/rules.ts; conversation ids that
   * cannot be a path segment; messages of another conversation).
   */
  #reader(operation: string, limit: number, options: RequestOptions): NestedReader<Conversation, Message> {
    // Every request of listAll and listNew is iteration traffic (unless the call says otherwise).
    const callOptions: RequestOptions = { ...options, priority: options.priority ?? 'batch' }
    const conversations = this.#conversationPages(PARENT_PAGE_SIZE, callOptions)
    // Prepared once per conversation, not per page.
    const prepared = new WeakMap<Conversation, PreparedList<MessagePageBody>>()
    return {
      parents: async (page, signal) => {
        const result = await conversations.fetch(page, signal)
        const issues = pageIssues(result.data, { page, positions: PARENT_PAGE_SIZE })
        result.data.data.forEach((conversation, i) => {
          const problem = idProblem(conversation.id)
          if (problem !== undefined) {
            issues.push({
              path: ['data', i, 'id'],
              code: 'custom',
              message: `Conversation ${JSON.stringify(conversation.id)}: ${problem}; its messages cannot be requested`,
            })
          }
        })
        return fetchedPage(result, (found) => conversations.invalid(page, result, found), issues)
      },
      children: async (conversation, page, signal) => {
        let messages = prepared.get(conversation)
        if (messages === undefined) {
          messages = this.#pipeline.prepareList(listMessages, { conversationId: conversation.id }, { limit }, callOptions)
          prepared.set(conversation, messages)
        }
        const list = messages
        const result = await list.fetch(page, signal)
        const issues = pageIssues(result.data, { page, positions: limit })
        if (result.data.conversation.id !== conversation.id) {
          issues.push({
            path: ['conversation', 'id'],
            code: 'custom',
            message: `Asked for the messages of conversation ${conversation.id}, the page is of conversation ${result.data.conversation.id}`,
          })
        }
        result.data.data.forEach((message, i) => {
          if (message.conversation_id !== conversation.id) {
            issues.push({
              path: ['data', i, 'conversation_id'],
              code: 'custom',
              message: `Message ${message.id} is of conversation ${message.conversation_id}, not of ${conversation.id} whose messages were asked for`,
            })
          }
        })
        return fetchedPage(result, (found) => list.invalid(page, result, found), issues)
      },
      parentId: (conversation) => conversation.id,
      childId: (message) => message.id,
      childTime: (message) => message.created_at,
      expectedChildren: (conversation) => conversation.message_count,
    }
  }
}

/** A checked page for the nested engine; throws the error that reports `issues` when there are any. */
function fetchedPage<T>(
  result: WithResponse<{ data: T[]; pagination: Pagination }>,
  invalid: (issues: readonly ValidationIssue[]) => ResponseValidationError,
  issues: readonly ValidationIssue[],
): FetchedPage<PageOf<T>> {
  if (issues.length > 0) throw invalid(issues)
  return { body: result.data, response: result.response, invalid }
}
