// `listNew`: only the messages added since a checkpoint, for jobs that run again and again (the
// nightly export). It scans the conversation list and compares each conversation with the
// checkpoint's entry for it:
//
// - not in the checkpoint → new: read from its first message (one with `message_count` 0 needs no request);
// - `message_count` and `updated_at` as in the checkpoint → unchanged: no request;
// - `message_count` above what was read (or equal, with another `updated_at`) → the page holding
//   message `read - 1` is requested, that message must still carry the id the checkpoint holds,
//   and what follows it is yielded (grown; unchanged when nothing follows);
// - the check fails, or `message_count` fell below what was read → rewound: read again from the
//   first message (at-least-once: its messages may repeat; message ids de-duplicate).
//
// The scan is checked for completeness: when the distinct ids it listed fall short of the list's
// `total`, or `total` went down while it was read (the list shifted under it), it scans again
// (at most 3 times in all) and reads what the earlier passes missed. Only after a
// complete scan are conversations the checkpoint has and the list does not reported as deleted.
// Concurrency, read-ahead, early exit, abort and error order are those of `listAll` (nested.ts).
import type { Conversation } from '../schemas/conversation.ts'
import type { Message } from '../schemas/message.ts'
import * as z from 'zod'
import { ChatServiceError } from '../errors/errors.ts'
import { checkArguments } from '../internal/args.ts'
import { isRememberedMessage, toCheckpoint, type ConversationCheckpoint, type MessagesCheckpoint } from './checkpoint.ts'
import type { NestedReader } from './list-all.ts'
import { NestedRun, walk, type ChildPlan } from './nested.ts'
import type { ShardFilter } from './shard.ts'

/** What {@link NewMessages.checkpoint} takes. */
const CHECKPOINT_OPTIONS = z.strictObject({ compact: z.boolean().optional() })

/** Passes over the conversation list one run may make (the first and two more) before it gives up on a complete scan. */
export const MAX_SCANS = 3

/**
 * What a `listNew` run found, per conversation of the scan (of its shard). Every conversation the
 * scan lists counts in exactly one of `new`, `grown`, `unchanged` and `rewound`.
 */
export interface ListNewSummary {
  /** Conversations not in the checkpoint (on a first run: every one, empty ones included). */
  readonly new: number
  /** Conversations with messages after the last one the checkpoint read. */
  readonly grown: number
  /** Conversations with nothing new (most need no request at all). */
  readonly unchanged: number
  /**
   * Ids of conversations whose stored messages no longer match the checkpoint (fewer messages, or
   * the last message read is not where it was): read again from their first message, so their
   * messages may repeat (at-least-once; message ids de-duplicate).
   */
  readonly rewound: readonly string[]
  /**
   * Ids of conversations in the checkpoint that a complete scan no longer lists, or that vanished
   * (404) while they were read. They leave the checkpoint.
   */
  readonly deleted: readonly string[]
  /** Passes over the conversation list: 1, or more when the list changed while it was read. */
  readonly scans: number
  /**
   * Whether the last pass listed every conversation (its distinct ids reached the list's `total`).
   * When false (the list kept shifting for 3 passes), nothing is reported deleted
   * and conversations not listed keep their checkpoint entries: the next run reads what they missed.
   */
  readonly complete: boolean
}

type Kind = 'new' | 'grown' | 'unchanged' | 'rewound'

/** How listNew reads one conversation. */
interface ListNewPlan extends ChildPlan {
  /** How the scan classed it; may still change when it is read (a failed check makes it rewound). */
  kind: Kind
  /** On `firstPage`, the message at this index must carry `id`; yield what follows it. */
  readonly check: { readonly index: number; readonly id: string | number } | undefined
  /** Messages read before this run (where reading resumes), and the id of the last of them. */
  readonly read: number
  readonly lastId: string | number | null
  readonly updatedAt: string
}

/** What {@link createListNew} takes. @internal */
export interface ListNewOptions {
  readonly limit: number
  readonly concurrency: number
  /** The checkpoint's entries (merged, this shard's only). */
  readonly entries: Map<string, ConversationCheckpoint>
  readonly signal?: AbortSignal | undefined
  readonly shard?: ShardFilter | undefined
  /** Logs at `warn` through the client's logger (redacted). */
  readonly warn: (message: string, fields: Record<string, unknown>) => void
}

let construct: (reader: NestedReader<Conversation, Message>, options: ListNewOptions) => NewMessages

/**
 * What `listNew()` returns: an async iterable of the messages added since the checkpoint, in the
 * nested-loop order over the conversations that have something new, that also says how far it got
 * (`progress`), what it found (`summary`), and where the next run starts (`checkpoint()`). It
 * iterates once.
 */
export class NewMessages implements AsyncIterable<Message> {
  readonly #reader: NestedReader<Conversation, Message>
  readonly #options: ListNewOptions
  /** The checkpoint as it stands: the input's entries, moved on by what this run yielded. */
  readonly #entries: Map<string, ConversationCheckpoint>
  readonly #counts: Record<Kind, number> = { new: 0, grown: 0, unchanged: 0, rewound: 0 }
  readonly #rewound: string[] = []
  readonly #deleted = new Set<string>()
  /** Every conversation id the passes listed (all shards). */
  readonly #seen = new Set<string>()
  #started = false
  #done = 0
  /** Messages yielded before the current pass began. */
  #doneBeforePass = 0
  #run: NestedRun<Conversation, Message, ListNewPlan> | undefined
  #scans = 0
  /** Set once the scan is settled: complete, or out of passes. */
  #complete: boolean | undefined

  static {
    construct = (reader, options) => new NewMessages(reader, options)
  }

  private constructor(reader: NestedReader<Conversation, Message>, options: ListNewOptions) {
    this.#reader = reader
    this.#options = options
    this.#entries = options.entries
  }

  /** `{ done, total }`: messages yielded so far by this run, and messages expected in all (known once the scan is complete; `undefined` until then). */
  get progress(): { readonly done: number; readonly total: number | undefined } {
    this.#settle()
    const expected = this.#complete === undefined ? undefined : this.#run?.expected
    return { done: this.#done, total: expected === undefined ? undefined : this.#doneBeforePass + expected }
  }

  /**
   * What the run found, once the conversation scan is complete; `undefined` until then. A
   * snapshot: counts are final for the conversations read so far, and a conversation whose check
   * fails when it is read moves from `grown` (or `unchanged`) to `rewound`; once the iteration has
   * ended, it no longer changes.
   */
  get summary(): ListNewSummary | undefined {
    this.#settle()
    if (this.#complete === undefined) return undefined
    return {
      new: this.#counts.new,
      grown: this.#counts.grown,
      unchanged: this.#counts.unchanged,
      rewound: [...this.#rewound],
      deleted: [...this.#deleted],
      scans: this.#scans,
      complete: this.#complete,
    }
  }

  /**
   * Where the next run starts: a snapshot (this run going on does not change it), valid at any
   * moment. Taken mid-run, it resumes with no gap and without reading finished conversations
   * again; taken at the end, the next run reads only what is new since. It holds this shard's
   * conversations only. Its cost grows with the number of conversations (about 0.1 s per
   * million on a 2-core machine): take it when you persist it, not for every message.
   *
   * Its size is about 40 bytes per conversation plus the lengths of the conversation's id and of its
   * last message's id: 62 MB per million conversations with ids of about 12 characters, 117 MB with
   * UUID-length ids. `compact: true` keeps each last message's id as a 53-bit fingerprint (a number,
   * see docs/nightly.md) instead, about 92 MB per million with UUID-length ids; any `listNew` reads both,
   * and the chance that a fingerprint hides a changed conversation is about 1 in 9 × 10^15 checks.
   *
   * @param options - `compact` (default false): fingerprints instead of the last messages' ids.
   * @throws RequestValidationError when `options` is not an object, `compact` not a boolean, or it
   * has another key (a misspelt `compact` would write the full form without a word).
   */
  checkpoint(options: { compact?: boolean | undefined } = {}): MessagesCheckpoint {
    // Checked at run time too: a checkpoint written in the wrong form would be found out only by the next run.
    const [{ compact }] = checkArguments('conversations.messages.listNew().checkpoint', [CHECKPOINT_OPTIONS, options, ['options']])
    this.#settle()
    return toCheckpoint(this.#entries, compact === true)
  }

  /**
   * The new messages, in order. Leaving the loop early aborts what is in flight and sends nothing
   * more; an error surfaces after every message before it.
   * @throws ChatServiceError when iterated a second time; APIUserAbortError when the caller's
   * signal fires; ResponseValidationError for a page that breaks the paging rules, a message of
   * another conversation, or an unusable conversation id; and the errors of the list requests
   * (APIError subclasses but a 404 on a conversation's messages, which counts it deleted;
   * APIConnectionError, APITimeoutError; ChatServiceError once the client is closed).
   */
  [Symbol.asyncIterator](): AsyncGenerator<Message, void, undefined> {
    if (this.#started) throw new ChatServiceError('A listNew() iterable iterates once: call listNew() again with the checkpoint')
    this.#started = true
    return this.#passes()
  }

  async *#passes(): AsyncGenerator<Message, void, undefined> {
    for (;;) {
      this.#scans++
      this.#doneBeforePass = this.#done
      yield* this.#pass()
      this.#settle()
      if (this.#complete !== undefined) return
      const scan = this.#run?.scan
      this.#options.warn(
        `conversations.messages.listNew: the conversation list changed while it was read (listed ${scan?.listed ?? 0} distinct conversations of ${scan?.total ?? 0}${scan?.shrank === true ? ', and its total went down' : ''}); scanning it again (pass ${this.#scans + 1} of ${MAX_SCANS})`,
        { listed: scan?.listed, total: scan?.total, pass: this.#scans + 1 },
      )
    }
  }

  #pass(): AsyncGenerator<Message, void, undefined> {
    const { limit, shard } = this.#options
    const reader = this.#reader
    const run = new NestedRun<Conversation, Message, ListNewPlan>(
      {
        parents: (page, signal) => reader.parents(page, signal),
        children: (conversation, page, signal) => reader.children(conversation, page, signal),
        parentId: (conversation) => conversation.id,
        plan: (conversation) => (shard === undefined || shard.has(conversation.id) ? this.#plan(conversation) : undefined),
      },
      { concurrency: this.#options.concurrency, start: { index: 0 }, seen: this.#seen },
    )
    this.#run = run
    // Where the conversation being read stands: what the next checkpoint entry says when it ends.
    let last: { read: number; id: string | number | null } = { read: 0, id: null }
    return walk(run, {
      signal: this.#options.signal,
      abortMessage: "listNew() was aborted by the caller's signal",
      start: (conversation, _page, result) => {
        const { plan } = conversation
        const check = plan.check
        if (check === undefined) {
          last = { read: 0, id: null }
          return 0
        }
        const found = result.data[check.index]
        if (found !== undefined && isRememberedMessage(found.id, check.id)) {
          last = { read: plan.read, id: plan.lastId }
          return check.index + 1
        }
        // The last message read is not where it was: read the conversation again from its first message.
        this.#reclass(plan, 'rewound')
        this.#rewound.push(conversation.parent.id)
        run.adjustExpected(conversation.parent.message_count - plan.expected)
        last = { read: 0, id: null }
        return 'restart'
      },
      child: (conversation, message, page, index) => {
        this.#done++
        last = { read: (page - 1) * limit + index + 1, id: message.id }
        this.#entries.set(conversation.parent.id, [last.read, last.id, conversation.plan.updatedAt])
        if (conversation.plan.kind === 'unchanged') this.#reclass(conversation.plan, 'grown')
      },
      vanished: (conversation, error, yielded) => {
        const { parent } = conversation
        this.#entries.delete(parent.id)
        this.#deleted.add(parent.id)
        run.adjustExpected(-Math.max(0, conversation.plan.expected - yielded))
        this.#options.warn(
          `conversations.messages.listNew: conversation ${parent.id} vanished (404) after it was listed; counted as deleted and went on`,
          { conversationId: parent.id, status: error.status, requestId: error.requestId },
        )
      },
      done: (conversation) => {
        const { plan, parent } = conversation
        this.#entries.set(parent.id, [last.read, last.read === 0 ? null : last.id, plan.updatedAt])
        if (plan.kind === 'grown' && last.read === plan.read && plan.check !== undefined) this.#reclass(plan, 'unchanged')
      },
    })
  }

  /** Classes a conversation listed for the first time in this run, and plans its reading (or none). */
  #plan(conversation: Conversation): ListNewPlan | undefined {
    const { id, message_count: count, updated_at: updatedAt } = conversation
    const { limit } = this.#options
    const entry = this.#entries.get(id)
    const plan = (kind: Kind, read: number, lastId: string | number | null): ListNewPlan => {
      this.#counts[kind]++
      if (kind === 'rewound') this.#rewound.push(id)
      if (read === 0 || lastId === null) return { kind, firstPage: 1, expected: count, check: undefined, read: 0, lastId: null, updatedAt }
      return {
        kind,
        firstPage: Math.floor((read - 1) / limit) + 1,
        expected: Math.max(0, count - read),
        check: { index: (read - 1) % limit, id: lastId },
        read,
        lastId,
        updatedAt,
      }
    }
    if (entry === undefined) {
      if (count > 0) return plan('new', 0, null)
      this.#counts.new++
      this.#entries.set(id, [0, null, updatedAt])
      return undefined
    }
    const [read, lastId] = entry
    if (count < read) return plan('rewound', 0, null)
    if (count === read && updatedAt === entry[2]) {
      this.#counts.unchanged++
      return undefined
    }
    return plan(count > read ? 'grown' : 'unchanged', read, lastId)
  }

  /** Moves a conversation from the class the scan gave it to `kind`. */
  #reclass(plan: ListNewPlan, kind: Kind): void {
    this.#counts[plan.kind]--
    this.#counts[kind]++
    plan.kind = kind
  }

  /**
   * Once the current pass's scan is complete (or it was the last pass allowed), settles the scan:
   * conversations the checkpoint has and no pass listed are deleted (only after a complete scan).
   */
  #settle(): void {
    if (this.#complete !== undefined) return
    const scan = this.#run?.scan
    if (scan === undefined) return
    const complete = scan.listed >= scan.total && !scan.shrank
    if (!complete && this.#scans < MAX_SCANS) return
    this.#complete = complete
    if (!complete) {
      this.#options.warn(
        `conversations.messages.listNew: the conversation list kept changing for ${MAX_SCANS} passes (the last listed ${scan.listed} distinct conversations of ${scan.total}); conversations it did not list keep their checkpoint entries and are read by the next run, and none is reported deleted`,
        { listed: scan.listed, total: scan.total },
      )
      return
    }
    for (const id of this.#entries.keys()) {
      if (this.#seen.has(id)) continue
      this.#entries.delete(id)
      this.#deleted.add(id)
    }
  }
}

/** Makes a {@link NewMessages} (its constructor is not public). @internal */
export function createListNew(reader: NestedReader<Conversation, Message>, options: ListNewOptions): NewMessages {
  return construct(reader, options)
}
