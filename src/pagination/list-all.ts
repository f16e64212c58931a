/**
 * `listAll`: every child of every parent (every message of every conversation), yielded in
 * exactly the order of the nested loop, on the scheduler of nested.ts (concurrency, bounded
 * memory), with progress, a resumable cursor, an optional shard, and vanished parents skipped out
 * loud. The parent list is scanned a second time once the first scan ends (list-scan.ts): the
 * parents only the second scan lists (a change the first could not see moved them past it) come
 * after all the others.
 */
import * as z from 'zod'
import type { NotFoundError } from '../errors/errors.ts'
import { ChatServiceError, RequestValidationError, ResponseValidationError, StaleCursorError } from '../errors/errors.ts'
import type { ScanReport } from './list-scan.ts'
import { NestedRun, walk, type ChildPlan, type NestedReader } from './nested.ts'
import type { Shard, ShardFilter } from './shard.ts'
import { madeOnce } from '../schemas/made-once.ts'

/** How far a {@link ListAllIterable} has got: children yielded so far, and children expected in all (internal name: `progress` spells it out). */
export interface ListAllProgress {
  /** Children yielded, counting those yielded before the cursor this iteration resumed from. */
  readonly done: number
  /**
   * Children expected in all: `done` plus the parents' own counts (conversations'
   * `message_count`) of what is left, known once the parent list has been read (it is read
   * ahead, up to 10,000 parents beyond the current one); `undefined` until then. Counts can be
   * stale, so `done` may end a little off `total`.
   */
  readonly total: number | undefined
  /**
   * Requests a second the iteration's pages are paced at since a 429 told it the service's rate
   * limit: the client's rate (`client.pacedRate`; ClientOptions `pacing`), or its page endpoint's
   * own pace where that is lower (a limit of that endpoint alone: docs/rate-limits.md);
   * `undefined` while neither paces them.
   */
  readonly pacedRate: number | undefined
}

/** A parent whose children could not be listed because it vanished (404) while the iteration ran (internal name: `skipped` spells it out). */
export interface SkippedParent<P> {
  /** The parent (conversation) as it was listed. */
  readonly parent: P
  /** The 404 the service answered. */
  readonly error: NotFoundError
  /** Children of it yielded before it vanished. */
  readonly yielded: number
}

/**
 * What a listing of a whole list did to stay exact while the list moved under it (list-scan.ts;
 * README, "Lists that move"). All zero when the list held still.
 */
export interface ListRepairs {
  /**
   * Passes over the list: 1, or 2 after a second scan (for `messages`: 2 once any conversation's
   * messages were read a second time, as those of a conversation that grew while it was read are).
   */
  readonly scans: number
  /** Times two consecutive pages showed the list had moved between them (their `total` differed). */
  readonly shifts: number
  /** Pages read again to repair those shifts (the second scan's pages are not counted here). */
  readonly rereads: number
  /** Items the repairs and the second scan found that a plain reading would have missed. */
  readonly recovered: number
  /** Items that came again (moved down by an insert, or read again by a repair) and were not yielded twice. */
  readonly repeated: number
}

/** What `listAll` and `listNew` repaired: of the conversation list, and of the messages of the conversations they read (summed). */
export interface MessagesRepairs {
  /** Of the conversation list (its second scan included). */
  readonly conversations: ListRepairs
  /** Of the messages of the conversations read, summed over them. */
  readonly messages: ListRepairs
}

/** Where an iteration stands: right after the last child yielded. What a cursor encodes. */
interface Position {
  /** Children per page; a cursor resumes only at the same page size. */
  readonly limit: number
  /** Children yielded up to here, this run and the runs it resumed. */
  readonly done: number
  /** Global index of the current parent in the parent list (0-based). */
  readonly parent: number
  /** Its id, checked on resume; `null` before the first parent was reached. */
  readonly parentId: string | null
  /** Page of the current parent's children that holds the last child yielded (1 before any). */
  readonly childPage: number
  /** Index of the last child yielded on that page; -1 before any. */
  readonly childIndex: number
  /** Its id, checked on resume; `null` before any. */
  readonly childId: string | null
  /** The shard the iteration reads, if any: a cursor resumes only the same shard. */
  readonly shard?: Shard | undefined
  /**
   * When the current parent is one only the second scan found (they come after all the others):
   * it and the ones after it, as listed. Resuming reads just these (`parent` is then the index in
   * this list, 0); `null` otherwise.
   */
  readonly found?: readonly unknown[] | null | undefined
}

/** An opaque resume position: the cursor string, decoded. @internal */
export type Cursor = Position

/**
 * The cursor format: a base64url JSON tuple. Version 2 adds the shard (`null, null` for none);
 * version 3 adds the conversations only the second scan found, from the current one on, when the
 * iteration is in them (written only then: every other cursor is version 2, which 0.3 reads).
 * Version 1 cursors (0.2) are still read, as cursors of no shard.
 */
const CURSOR_VERSION = 2
const FOUND_VERSION = 3
/**
 * The schema of a decoded cursor, made on first use: only a `listAll` given a cursor needs it.
 * `foundParent`: a parent as listed, kept in a version 3 cursor (an object with a string `id`).
 */
const cursorSchema = madeOnce(() => {
  const foundParent = z.looseObject({ id: z.string().min(1) })
  const positionFields = [
    z.number().int().min(1).max(100),
    z.number().int().min(0),
    z.number().int().min(0),
    z.string().nullable(),
    z.number().int().min(1),
    z.number().int().min(-1),
    z.string().nullable(),
  ] as const
  const shardFields = [z.number().int().min(0).nullable(), z.number().int().min(1).nullable()] as const
  return z.union([
    z.tuple([z.literal(1), ...positionFields]),
    z.tuple([z.literal(CURSOR_VERSION), ...positionFields, ...shardFields]),
    z.tuple([z.literal(FOUND_VERSION), ...positionFields, ...shardFields, z.array(foundParent).min(1)]),
  ])
})

/** Encodes a position as an opaque, URL-safe string. */
function encodeCursor(p: Position): string {
  const fields = [
    p.found === null || p.found === undefined ? CURSOR_VERSION : FOUND_VERSION,
    p.limit,
    p.done,
    p.parent,
    p.parentId,
    p.childPage,
    p.childIndex,
    p.childId,
    p.shard?.index ?? null,
    p.shard?.count ?? null,
    ...(p.found === null || p.found === undefined ? [] : [p.found]),
  ]
  return Buffer.from(JSON.stringify(fields)).toString('base64url')
}

/**
 * Reads a cursor made by `cursor()`.
 * @throws RequestValidationError naming `operation` when it is not one.
 */
export function decodeCursor(cursor: string, operation: string): Cursor {
  let fields: unknown
  try {
    fields = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    fields = undefined
  }
  const result = cursorSchema().safeParse(fields)
  if (!result.success) {
    throw new RequestValidationError(operation, [
      { path: ['cursor'], code: 'invalid_format', message: 'Expected a cursor returned by cursor() of an earlier listAll() iteration' },
    ])
  }
  const [, limit, done, parent, parentId, childPage, childIndex, childId] = result.data
  const [shardIndex, shardCount] = result.data[0] === 1 ? [null, null] : [result.data[8], result.data[9]]
  const shard = shardIndex === null || shardCount === null ? undefined : { index: shardIndex, count: shardCount }
  const found = result.data[0] === FOUND_VERSION ? result.data[10] : null
  return { limit, done, parent, parentId, childPage, childIndex, childId, shard, found }
}

/** The position before the first child of the first parent. */
export function startPosition(limit: number, shard?: Shard): Cursor {
  return { limit, done: 0, parent: 0, parentId: null, childPage: 1, childIndex: -1, childId: null, shard }
}

function staleCursor(what: string): StaleCursorError {
  return new StaleCursorError(
    `Cannot resume from this cursor: ${what}, so the data changed since the cursor was taken and resuming could skip or repeat items. ` +
      'Start again without a cursor (offset paging cannot follow items that moved).',
  )
}

/** How listAll reads one parent: its plan, and for the parent it resumes in, the child to resume after. */
interface ListAllPlan extends ChildPlan {
  /** On `firstPage`: resume right after the child with this id, wherever it is on that page. */
  readonly after: string | null
}

/** What {@link createListAll} takes. @internal */
export interface ListAllOptions<P> {
  readonly concurrency: number
  readonly start: Cursor
  readonly signal?: AbortSignal | undefined
  readonly shard?: ShardFilter | undefined
  /** Whether to scan the parent list a second time (default true). */
  readonly rescan: boolean
  /** Told once per parent that vanished (404) while the iteration ran. */
  readonly onSkip: (skipped: SkippedParent<P>) => void
  /** The error for a list that will not hold still. */
  readonly unstable: (list: 'conversations' | 'messages', report: ScanReport) => Error
  /** Told once the iteration ends, when it repaired anything (it logs it). */
  readonly repaired: (repairs: MessagesRepairs) => void
  /** The client's paced rate now, in requests/s (`undefined` while unpaced): shown by `progress`. */
  readonly pacedRate: () => number | undefined
}

let construct: <P, C>(reader: NestedReader<P, C>, options: ListAllOptions<P>) => ListAllIterable<P, C>

/**
 * What `listAll()` returns: an async iterable of every child, in nested-loop order, that also
 * tells how far it got (`progress`), where to resume (`cursor()`), and which parents vanished
 * while it ran (`skipped`). It iterates once. For messages: every message of every conversation
 * (spec, Endpoints 5 and 6, and the Paging rule).
 */
export class ListAllIterable<P, C> implements AsyncIterable<C> {
  readonly #reader: NestedReader<P, C>
  readonly #options: ListAllOptions<P>
  #position: Position
  #started = false
  /** The run under way (or done): it knows how many children the plans expect. */
  #runner: NestedRun<P, C, ListAllPlan> | undefined
  readonly #skipped: SkippedParent<P>[] = []

  static {
    construct = (reader, options) => new ListAllIterable(reader, options)
  }

  private constructor(reader: NestedReader<P, C>, options: ListAllOptions<P>) {
    this.#reader = reader
    this.#options = options
    this.#position = options.start
  }

  /**
   * How far the iteration has got: `done`, the children (messages) yielded, counting those yielded
   * before the cursor this iteration resumed from; `total`, the children expected in all: `done`
   * plus the parents' own counts (conversations' `message_count`) of what is left, known once the
   * parent list has been read (it is read ahead, up to 10,000 parents beyond the current one),
   * `undefined` until then. Counts can be stale, so `done` may end a little off `total`.
   * `pacedRate`: the requests a second its pages are paced at since a 429 (`client.pacedRate`, or
   * its page endpoint's own pace where lower), `undefined` while they are not paced.
   */
  get progress(): { readonly done: number; readonly total: number | undefined; readonly pacedRate: number | undefined } {
    const expected = this.#runner?.expected
    return {
      done: this.#position.done,
      total: expected === undefined ? undefined : this.#options.start.done + expected,
      pacedRate: this.#options.pacedRate(),
    }
  }

  /**
   * An opaque string that resumes right after the last child yielded so far: pass it as
   * `listAll({ cursor })` (with the same `shard`, if any). Taken before anything was yielded, it
   * resumes where this iteration began.
   */
  cursor(): string {
    return encodeCursor(this.#position)
  }

  /**
   * Parents that vanished (404) while the iteration ran: each `parent` (the conversation as it was
   * listed), the 404 `error` the service answered, and the children of it `yielded` before it
   * vanished. Their other children were skipped, and each was logged at `warn`.
   */
  get skipped(): readonly { readonly parent: P; readonly error: NotFoundError; readonly yielded: number }[] {
    return this.#skipped
  }

  /**
   * What the iteration did so far to stay exact while the data moved under it: repairs of the
   * conversation list (its second scan included) and of the conversations' messages. All zero
   * when nothing moved; logged at `warn` once the iteration ends when anything was repaired.
   */
  get repairs(): MessagesRepairs {
    const run = this.#runner
    if (run === undefined) return { conversations: NO_REPAIRS, messages: NO_REPAIRS }
    return { conversations: run.parentRepairs, messages: run.childRepairs }
  }

  /**
   * Every child of every parent, in order. Leaving the loop early aborts what is in flight and
   * sends nothing more; an error surfaces after every child before it.
   * @throws ChatServiceError when iterated a second time; StaleCursorError when the data changed so
   * much since the cursor was taken that its parent or child is no longer where it was;
   * APIUserAbortError when the caller's signal fires; ResponseValidationError for a page that
   * breaks the paging rules (docs/paging.md), a message of another conversation, or an unusable
   * conversation id; and the errors of the list requests (APIError subclasses but a 404 on a
   * parent's children, which skips it; APIConnectionError, APITimeoutError; ChatServiceError once
   * the client is closed); UnstableListError when the conversation list or a conversation's
   * messages kept moving beyond what repairs may read.
   */
  [Symbol.asyncIterator](): AsyncGenerator<C, void, undefined> {
    if (this.#started)
      throw new ChatServiceError('A listAll() iterable iterates once: call listAll() again, or listAll({ cursor }) to resume')
    this.#started = true
    return this.#run()
  }

  async *#run(): AsyncGenerator<C, void, undefined> {
    const { start, shard, unstable } = this.#options
    // Resuming in the parents only a second scan found: those are read, from the cursor's, and no list.
    const found = start.found === null || start.found === undefined ? undefined : (start.found as P[])
    const reader = found === undefined ? this.#reader : fixedParents(this.#reader, found)
    const run = new NestedRun<P, C, ListAllPlan>(reader, {
      concurrency: this.#options.concurrency,
      start: { index: start.parent, resume: start.parentId === null ? undefined : { parentId: start.parentId, stale: staleCursor } },
      plan: (parent, _index, resumed) => {
        if (shard !== undefined && !shard.has(reader.parentId(parent))) return undefined
        const count = reader.expectedChildren(parent)
        if (!resumed) return { firstPage: 1, expected: count, after: null }
        const before = start.childIndex < 0 ? 0 : (start.childPage - 1) * start.limit + start.childIndex + 1
        return { firstPage: start.childPage, expected: Math.max(0, count - before), after: start.childId }
      },
      rescan: this.#options.rescan && found === undefined ? () => true : undefined,
      unstableParents: (report) => unstable('conversations', report),
      unstableChildren: (report) => unstable('messages', report),
    })
    this.#runner = run
    /** The conversation whose messages are being read a second time (its index), or -1. */
    let rereading = -1
    /** Where this run began reading a conversation's messages: its first, or the cursor's for the one it resumes in. */
    const began = (parent: { readonly plan: ListAllPlan }): Pick<Position, 'childPage' | 'childIndex' | 'childId'> =>
      parent.plan.after === null
        ? { childPage: 1, childIndex: -1, childId: null }
        : { childPage: start.childPage, childIndex: start.childIndex, childId: start.childId }
    /** Where the cursor goes once that second pass ends: after the furthest message of the first. */
    let afterRead: Position | undefined
    try {
      yield* walk(run, reader, {
        signal: this.#options.signal,
        abortMessage: "listAll() was aborted by the caller's signal",
        start: (parent, page, body) => {
          const after = parent.plan.after
          if (after === null) return 0
          const at = body.data.findIndex((child) => reader.childId(child) === after)
          if (at === -1) throw staleCursor(`message ${after} is no longer on page ${page} of its conversation`)
          return at + 1
        },
        beforeStart: (parent) =>
          staleCursor(
            `the messages of conversation ${reader.parentId(parent.parent)} shifted before the cursor's page while they were read`,
          ),
        restarted: () => undefined,
        page: () => undefined,
        rereading: (parent) => {
          // Until its second pass ends, a cursor resumes where this run began reading the conversation:
          // what the second pass has not found yet cannot be told apart from what came (those repeat).
          rereading = parent.index
          if (this.#position.parentId !== reader.parentId(parent.parent)) return // nothing of it yielded yet
          afterRead = this.#position
          this.#position = { ...this.#position, ...began(parent) }
        },
        child: (parent, child, page, index, pass) => {
          // In the parents only the second scan found, the cursor holds them from this one on: no
          // list position can find them again. (Its index is then the one in that list.)
          const rest = found !== undefined || parent.scan > 1 ? run.remaining() : null
          const at = {
            shard: start.shard,
            limit: start.limit,
            done: this.#position.done + 1,
            parent: rest === null ? parent.index : 0,
            parentId: reader.parentId(parent.parent),
            childPage: page,
            childIndex: index,
            childId: reader.childId(child),
            found: rest,
          }
          if (rereading !== parent.index) {
            this.#position = at
            return
          }
          // The furthest message of the first pass: where the cursor stands once the second pass ends.
          if (pass === 1) afterRead = at
          this.#position = { ...at, ...began(parent) }
        },
        vanished: (parent, error, yielded) => {
          if (rereading === parent.index) {
            rereading = -1
            afterRead = undefined
          }
          const skipped = { parent: parent.parent, error, yielded }
          this.#skipped.push(skipped)
          run.adjustExpected(-Math.max(0, parent.plan.expected - yielded))
          this.#options.onSkip(skipped)
        },
        done: (parent) => {
          if (rereading !== parent.index) return
          rereading = -1
          if (afterRead !== undefined) this.#position = { ...afterRead, done: this.#position.done }
          afterRead = undefined
        },
      })
    } finally {
      const repairs = this.repairs
      if (repairs.conversations.shifts + repairs.conversations.recovered + repairs.messages.shifts + repairs.messages.recovered > 0) {
        this.#options.repaired(repairs)
      }
    }
  }
}

const NO_REPAIRS: ListRepairs = { scans: 1, shifts: 0, rereads: 0, recovered: 0, repeated: 0 }

/** `reader` with a parent list of exactly `parents`, on one page no request reads (a cursor's `found`). */
function fixedParents<P, C>(reader: NestedReader<P, C>, parents: readonly P[]): NestedReader<P, C> {
  const count = parents.length
  const body = { data: parents, pagination: { page: 1, limit: Math.max(1, count), total: count, total_pages: 1 } }
  return {
    ...reader,
    parents: (page) =>
      Promise.resolve({
        body: page === 1 ? body : { ...body, data: [], pagination: { ...body.pagination, page } },
        response: { status: 200, headers: {}, requestId: undefined },
        invalid: (issues) =>
          new ResponseValidationError({
            status: 200,
            headers: {},
            body,
            method: 'GET',
            path: '(the cursor)',
            requestId: undefined,
            issues,
          }),
      }),
  }
}

/** Makes a {@link ListAllIterable} (its constructor is not public). @internal */
export function createListAll<P, C>(reader: NestedReader<P, C>, options: ListAllOptions<P>): ListAllIterable<P, C> {
  return construct(reader, options)
}
