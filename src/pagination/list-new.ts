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
// The scan reads the list exactly once while it moves (list-scan.ts: a shift between two pages is
// repaired before anything of the later page is planned), and scans it a second time when the
// first scan saw the list move or left checkpoint entries unlisted: changes that keep `total`
// cannot be seen from one scan, and a conversation is reported deleted only when neither scan
// lists it. A quiet night costs one scan. Concurrency, read-ahead, early exit, abort and error
// order are those of `listAll` (nested.ts).
import type { Conversation } from '../schemas/conversation.ts'
import type { Message } from '../schemas/message.ts'
import * as z from 'zod'
import { madeOnce } from '../schemas/made-once.ts'
import { ChatServiceError } from '../errors/errors.ts'
import { checkArguments } from '../internal/args.ts'
import {
  isRememberedMessage,
  toCheckpoint,
  type CheckpointService,
  type ConversationCheckpoint,
  type MessagesCheckpoint,
} from './checkpoint.ts'
import type { MessagesRepairs } from './list-all.ts'
import type { ScanReport } from './list-scan.ts'
import { NestedRun, walk, type ChildPlan, type NestedReader } from './nested.ts'
import type { ShardFilter } from './shard.ts'

/** What {@link NewMessages.checkpoint} takes. */
const CHECKPOINT_OPTIONS = madeOnce(() => z.strictObject({ compact: z.boolean().optional() }))

/** Passes over the conversation list one run makes at most: the first, and a second when the first saw the list move. */
export const MAX_SCANS = 2

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
  /**
   * Passes over the conversation list: 1, or 2 when the first saw the list move (or left
   * conversations of the checkpoint unlisted) and a second scan read it again.
   */
  readonly scans: number
  /**
   * Whether the scan read the whole list. False only when the list kept moving beyond what its
   * repairs may read (list-scan.ts): then the scan stopped there, nothing is reported deleted, and
   * conversations not listed keep their checkpoint entries (the next run reads what they missed).
   */
  readonly complete: boolean
  /** What the run repaired while the data moved under it; see `NewMessages.repairs`. */
  readonly repairs: MessagesRepairs
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
  /** The service and key the run reads with: what its checkpoints record. */
  readonly service: CheckpointService
  readonly signal?: AbortSignal | undefined
  readonly shard?: ShardFilter | undefined
  /** Logs at `warn` through the client's logger (redacted). */
  readonly warn: (message: string, fields: Record<string, unknown>) => void
  /** Told of each conversation the scan lists (of this shard), once. */
  readonly onConversation?: ((conversation: Conversation) => void) | undefined
  /** The error for a list of messages that will not hold still. */
  readonly unstable: (report: ScanReport) => Error
  /** Describes what a run repaired, for its log line. */
  readonly describe: (report: ScanReport) => string
  /** The client's paced rate now, in requests/s (`undefined` while unpaced): shown by `progress`. */
  readonly pacedRate: () => number | undefined
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
  #started = false
  #done = 0
  #run: NestedRun<Conversation, Message, ListNewPlan> | undefined
  /** Set once the scan is settled: complete, or stopped. */
  #complete: boolean | undefined

  static {
    construct = (reader, options) => new NewMessages(reader, options)
  }

  private constructor(reader: NestedReader<Conversation, Message>, options: ListNewOptions) {
    this.#reader = reader
    this.#options = options
    this.#entries = options.entries
  }

  /**
   * `{ done, total, pacedRate }`: messages yielded so far by this run, messages expected in all
   * (known once the scan is complete; `undefined` until then), and the requests a second its pages
   * are paced at since a 429 (`client.pacedRate`, or its page endpoint's own pace where lower;
   * `undefined` while they are not paced).
   */
  get progress(): { readonly done: number; readonly total: number | undefined; readonly pacedRate: number | undefined } {
    this.#settle()
    return { done: this.#done, total: this.#complete === undefined ? undefined : this.#run?.expected, pacedRate: this.#options.pacedRate() }
  }

  /**
   * What the run did so far to stay exact while the data moved under it: repairs of the
   * conversation list (its second scan included) and of the messages of the conversations it read.
   * All zero on a night when nothing moved; logged at `warn` once the iteration ends when anything
   * was repaired.
   */
  get repairs(): MessagesRepairs {
    const run = this.#run
    if (run === undefined) return { conversations: NO_REPAIRS, messages: NO_REPAIRS }
    return { conversations: run.parentRepairs, messages: run.childRepairs }
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
      scans: this.#run?.parentRepairs.scans ?? 1,
      complete: this.#complete,
      repairs: this.repairs,
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
    const [{ compact }] = checkArguments('conversations.messages.listNew().checkpoint', [CHECKPOINT_OPTIONS(), options, ['options']])
    this.#settle()
    return toCheckpoint(this.#entries, this.#options.service, compact === true)
  }

  /**
   * The new messages, in order. Leaving the loop early aborts what is in flight and sends nothing
   * more; an error surfaces after every message before it.
   * @throws ChatServiceError when iterated a second time; APIUserAbortError when the caller's
   * signal fires; ResponseValidationError for a page that breaks the paging rules, a message of
   * another conversation, or an unusable conversation id; and the errors of the list requests
   * (APIError subclasses but a 404 on a conversation's messages, which counts it deleted;
   * APIConnectionError, APITimeoutError; ChatServiceError once the client is closed);
   * UnstableListError when a conversation's messages kept moving beyond what repairs may read (the
   * checkpoint taken then resumes with no gap); whatever `onConversation` throws.
   */
  [Symbol.asyncIterator](): AsyncGenerator<Message, void, undefined> {
    if (this.#started) throw new ChatServiceError('A listNew() iterable iterates once: call listNew() again with the checkpoint')
    this.#started = true
    return this.#iterate()
  }

  async *#iterate(): AsyncGenerator<Message, void, undefined> {
    const { limit, shard } = this.#options
    const reader = this.#reader
    const run: NestedRun<Conversation, Message, ListNewPlan> = new NestedRun<Conversation, Message, ListNewPlan>(reader, {
      concurrency: this.#options.concurrency,
      start: { index: 0 },
      plan: (conversation) => (shard === undefined || shard.has(conversation.id) ? this.#plan(conversation) : undefined),
      // A second scan when the first saw the list move, or did not list a conversation of the checkpoint (deleted, or moved past).
      rescan: (first): boolean => first.moved || [...this.#entries.keys()].some((id) => !run.listed(id)),
      unstableParents: () => 'stop',
      unstableChildren: (report) => this.#options.unstable(report),
    })
    this.#run = run
    // Where the conversation being read stands: what the next checkpoint entry says when it ends.
    let last: { read: number; id: string | number | null } = { read: 0, id: null }
    // Whether it is being read a second time (it may have grown while it was read): until that ends,
    // its checkpoint entry is where this run began reading it, since what the second pass has not
    // found yet cannot be told apart from what came (a run resumed then repeats what this one yielded of it).
    let second = false
    const rewind = (conversation: { parent: Conversation; plan: ListNewPlan }): void => {
      const { plan, parent } = conversation
      if (plan.kind !== 'rewound') {
        this.#reclass(plan, 'rewound')
        this.#rewound.push(parent.id)
      }
      run.adjustExpected(parent.message_count - plan.expected)
      last = { read: 0, id: null }
      // What this run yielded of it comes again: the checkpoint says nothing of it was read.
      this.#entries.set(parent.id, [0, null, plan.updatedAt])
    }
    try {
      yield* walk(run, reader, {
        signal: this.#options.signal,
        abortMessage: "listNew() was aborted by the caller's signal",
        start: (conversation, _page, body) => {
          const { plan } = conversation
          const check = plan.check
          if (check === undefined) {
            last = { read: 0, id: null }
            return 0
          }
          const found = body.data[check.index]
          if (found !== undefined && isRememberedMessage(found.id, check.id)) {
            last = { read: plan.read, id: plan.lastId }
            return check.index + 1
          }
          // The last message read is not where it was: read the conversation again from its first message.
          rewind(conversation)
          return 'restart'
        },
        beforeStart: () => 'restart',
        restarted: (conversation) => {
          // Read again from its first message as a new listing: every message from there on is progress.
          second = false
          rewind(conversation)
        },
        page: (conversation, page, body) => {
          // A page read again may show the last message yielded has moved: the checkpoint follows it.
          const id = last.id
          if (id === null) return
          const at = body.data.findIndex((message) => isRememberedMessage(message.id, id))
          if (at === -1) return
          last = { read: (page - 1) * limit + at + 1, id }
          if (!second) this.#entries.set(conversation.parent.id, [last.read, id, conversation.plan.updatedAt])
        },
        rereading: (conversation) => {
          second = true
          const { plan } = conversation
          const from = plan.kind === 'rewound' || plan.read === 0 ? 0 : plan.read // rewound: from its first message
          this.#entries.set(conversation.parent.id, [from, from === 0 ? null : plan.lastId, plan.updatedAt])
        },
        child: (conversation, message, page, index, pass) => {
          this.#done++
          if (conversation.plan.kind === 'unchanged') this.#reclass(conversation.plan, 'grown')
          // What the second pass finds lies before the furthest message read: `last` stays there.
          if (second && pass > 1) return
          last = { read: (page - 1) * limit + index + 1, id: message.id }
          if (!second) this.#entries.set(conversation.parent.id, [last.read, last.id, conversation.plan.updatedAt])
        },
        vanished: (conversation, error, yielded) => {
          second = false
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
          second = false
          const { plan, parent } = conversation
          this.#entries.set(parent.id, [last.read, last.read === 0 ? null : last.id, plan.updatedAt])
          if (plan.kind === 'grown' && last.read === plan.read && plan.check !== undefined) this.#reclass(plan, 'unchanged')
        },
      })
    } finally {
      this.#settle()
      const { conversations, messages } = this.repairs
      if (conversations.shifts + conversations.recovered > 0 || conversations.scans > 1) {
        this.#options.warn(`conversations.messages.listNew: the conversation list: ${this.#options.describe(conversations)}`, {
          ...conversations,
        })
      }
      if (messages.shifts + messages.recovered > 0) {
        this.#options.warn(`conversations.messages.listNew: the messages of the conversations read: ${this.#options.describe(messages)}`, {
          ...messages,
        })
      }
    }
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
    this.#options.onConversation?.(conversation)
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
   * Once the conversation scan is done, settles it: conversations the checkpoint has and no scan
   * listed are deleted (only when the scan read the whole list).
   */
  #settle(): void {
    if (this.#complete !== undefined) return
    const run = this.#run
    if (run === undefined || !run.scanDone) return
    const complete = run.complete
    this.#complete = complete
    if (!complete) {
      this.#options.warn(
        `conversations.messages.listNew: the conversation list kept moving beyond what its repairs may read (${run.parentRepairs.shifts} shifts); the scan stopped there: conversations it did not list keep their checkpoint entries and are read by the next run, and none is reported deleted`,
        { ...run.parentRepairs },
      )
      return
    }
    for (const id of this.#entries.keys()) {
      if (run.listed(id)) continue
      this.#entries.delete(id)
      this.#deleted.add(id)
    }
  }
}

const NO_REPAIRS: ScanReport = { scans: 1, shifts: 0, rereads: 0, recovered: 0, repeated: 0 }

/** Makes a {@link NewMessages} (its constructor is not public). @internal */
export function createListNew(reader: NestedReader<Conversation, Message>, options: ListNewOptions): NewMessages {
  return construct(reader, options)
}
