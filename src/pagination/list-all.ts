/**
 * `listAll`: every child of every parent (every message of every conversation), yielded in
 * exactly the order of the nested loop, on the scheduler of nested.ts (concurrency, bounded
 * memory), with progress, a resumable cursor, an optional shard, and vanished parents skipped out
 * loud.
 */
import * as z from 'zod'
import type { NotFoundError } from '../errors/errors.ts'
import { ChatServiceError, RequestValidationError, StaleCursorError } from '../errors/errors.ts'
import { NestedRun, walk, type ChildPlan, type SourcePage } from './nested.ts'
import type { Shard, ShardFilter } from './shard.ts'

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
 * What an iteration over parents and their children reads: the pages, and what it needs to know
 * of the records. Requests carry the caller's own signal; `signal` is the iteration's own,
 * aborted when it ends. @internal
 */
export interface NestedReader<P, C> {
  /** Page `page` (at 100 a page) of the parents, in the service's order; checked response by response. */
  parents(page: number, signal: AbortSignal): Promise<SourcePage<P>>
  /** Page `page` of one parent's children at the iteration's limit; checked response by response. */
  children(parent: P, page: number, signal: AbortSignal): Promise<SourcePage<C>>
  parentId(parent: P): string
  childId(child: C): string
  /** How many children the parent says it has (conversations' `message_count`). */
  expectedChildren(parent: P): number
  /** Told once per parent that vanished (404) while the iteration ran. */
  onSkip(skipped: SkippedParent<P>): void
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
}

/** An opaque resume position: the cursor string, decoded. @internal */
export type Cursor = Position

/**
 * The cursor format: a base64url JSON tuple. Version 2 adds the shard (`null, null` for none);
 * version 1 cursors (0.2) are still read, as cursors of no shard.
 */
const CURSOR_VERSION = 2
const positionFields = [
  z.number().int().min(1).max(100),
  z.number().int().min(0),
  z.number().int().min(0),
  z.string().nullable(),
  z.number().int().min(1),
  z.number().int().min(-1),
  z.string().nullable(),
] as const
const cursorSchema = z.union([
  z.tuple([z.literal(1), ...positionFields]),
  z.tuple([z.literal(CURSOR_VERSION), ...positionFields, z.number().int().min(0).nullable(), z.number().int().min(1).nullable()]),
])

/** Encodes a position as an opaque, URL-safe string. */
function encodeCursor(p: Position): string {
  const fields: z.input<typeof cursorSchema> = [
    CURSOR_VERSION,
    p.limit,
    p.done,
    p.parent,
    p.parentId,
    p.childPage,
    p.childIndex,
    p.childId,
    p.shard?.index ?? null,
    p.shard?.count ?? null,
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
  const result = cursorSchema.safeParse(fields)
  if (!result.success) {
    throw new RequestValidationError(operation, [
      { path: ['cursor'], code: 'invalid_format', message: 'Expected a cursor returned by cursor() of an earlier listAll() iteration' },
    ])
  }
  const [, limit, done, parent, parentId, childPage, childIndex, childId] = result.data
  const [shardIndex, shardCount] = result.data[0] === 1 ? [null, null] : [result.data[8], result.data[9]]
  const shard = shardIndex === null || shardCount === null ? undefined : { index: shardIndex, count: shardCount }
  return { limit, done, parent, parentId, childPage, childIndex, childId, shard }
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
export interface ListAllOptions {
  readonly concurrency: number
  readonly start: Cursor
  readonly signal?: AbortSignal | undefined
  readonly shard?: ShardFilter | undefined
}

let construct: <P, C>(reader: NestedReader<P, C>, options: ListAllOptions) => ListAllIterable<P, C>

/**
 * What `listAll()` returns: an async iterable of every child, in nested-loop order, that also
 * tells how far it got (`progress`), where to resume (`cursor()`), and which parents vanished
 * while it ran (`skipped`). It iterates once. For messages: every message of every conversation
 * (spec, Endpoints 5 and 6, and the Paging rule).
 */
export class ListAllIterable<P, C> implements AsyncIterable<C> {
  readonly #reader: NestedReader<P, C>
  readonly #options: ListAllOptions
  #position: Position
  #started = false
  /** The run under way (or done): it knows how many children the plans expect. */
  #runner: NestedRun<P, C, ListAllPlan> | undefined
  readonly #skipped: SkippedParent<P>[] = []

  static {
    construct = (reader, options) => new ListAllIterable(reader, options)
  }

  private constructor(reader: NestedReader<P, C>, options: ListAllOptions) {
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
   */
  get progress(): { readonly done: number; readonly total: number | undefined } {
    const expected = this.#runner?.expected
    return { done: this.#position.done, total: expected === undefined ? undefined : this.#options.start.done + expected }
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
   * Every child of every parent, in order. Leaving the loop early aborts what is in flight and
   * sends nothing more; an error surfaces after every child before it.
   * @throws ChatServiceError when iterated a second time; StaleCursorError when the data changed so
   * much since the cursor was taken that its parent or child is no longer where it was;
   * APIUserAbortError when the caller's signal fires; ResponseValidationError for a page that
   * breaks the paging rules (docs/paging.md), a message of another conversation, or an unusable
   * conversation id; and the errors of the list requests (APIError subclasses but a 404 on a
   * parent's children, which skips it; APIConnectionError, APITimeoutError; ChatServiceError once
   * the client is closed).
   */
  [Symbol.asyncIterator](): AsyncGenerator<C, void, undefined> {
    if (this.#started)
      throw new ChatServiceError('A listAll() iterable iterates once: call listAll() again, or listAll({ cursor }) to resume')
    this.#started = true
    return this.#run()
  }

  #run(): AsyncGenerator<C, void, undefined> {
    const { start, shard } = this.#options
    const reader = this.#reader
    const run = new NestedRun<P, C, ListAllPlan>(
      {
        parents: (page, signal) => reader.parents(page, signal),
        children: (parent, page, signal) => reader.children(parent, page, signal),
        parentId: (parent) => reader.parentId(parent),
        plan: (parent, _index, resumed) => {
          if (shard !== undefined && !shard.has(reader.parentId(parent))) return undefined
          const count = reader.expectedChildren(parent)
          if (!resumed) return { firstPage: 1, expected: count, after: null }
          const before = start.childIndex < 0 ? 0 : (start.childPage - 1) * start.limit + start.childIndex + 1
          return { firstPage: start.childPage, expected: Math.max(0, count - before), after: start.childId }
        },
      },
      {
        concurrency: this.#options.concurrency,
        start: { index: start.parent, resume: start.parentId === null ? undefined : { parentId: start.parentId, stale: staleCursor } },
      },
    )
    this.#runner = run
    const children = walk(run, {
      signal: this.#options.signal,
      abortMessage: "listAll() was aborted by the caller's signal",
      start: (parent, page, result) => {
        const after = parent.plan.after
        if (after === null) return 0
        const at = result.data.findIndex((child) => reader.childId(child) === after)
        if (at === -1) throw staleCursor(`message ${after} is no longer on page ${page} of its conversation`)
        return at + 1
      },
      child: (parent, child, page, index) => {
        this.#position = {
          shard: start.shard,
          limit: start.limit,
          done: this.#position.done + 1,
          parent: parent.index,
          parentId: reader.parentId(parent.parent),
          childPage: page,
          childIndex: index,
          childId: reader.childId(child),
        }
      },
      vanished: (parent, error, yielded) => {
        const skipped = { parent: parent.parent, error, yielded }
        this.#skipped.push(skipped)
        run.adjustExpected(-Math.max(0, parent.plan.expected - yielded))
        reader.onSkip(skipped)
      },
      done: () => undefined,
    })
    return children
  }
}

/** Makes a {@link ListAllIterable} (its constructor is not public). @internal */
export function createListAll<P, C>(reader: NestedReader<P, C>, options: ListAllOptions): ListAllIterable<P, C> {
  return construct(reader, options)
}
