/**
 * Every child of every parent (every message of every conversation), yielded in exactly the
 * order of the nested loop, fetched with up to `concurrency` requests in flight for the whole
 * iteration, in bounded memory, with progress, a resumable cursor, and vanished parents skipped
 * out loud.
 *
 * How it schedules: the pages the consumer will need are known, in order, as far as the
 * responses so far tell (a parent's later pages once its first page has told `total_pages`; a
 * parent's first page as soon as the parent is listed). Whenever a request settles or the
 * consumer takes a page, the earliest needed pages not yet requested are launched, while fewer
 * than `concurrency` are in flight, the page lies within `2 × concurrency` pages of the one being
 * consumed, and fewer than `4 × concurrency` pages are fetched but not yet consumed. The page the
 * consumer waits for is always launched. So a huge parent at the head gets all the parallelism,
 * and nothing runs far ahead of the consumer: at most `4 × concurrency` child pages are held.
 */
import * as z from 'zod'
import { SDK_CANCELLED } from '../internal/cancellation.ts'
import { APIUserAbortError, ChatServiceError, NotFoundError, RequestValidationError, StaleCursorError } from '../errors/errors.ts'
import type { Pagination } from '../schemas/common.ts'

/** How far a {@link ListAllIterable} has got: children yielded so far, and children expected in all. */
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

/** A parent whose children could not be listed because it vanished (404) while the iteration ran. */
export interface SkippedParent<P> {
  /** The parent (conversation) as it was listed. */
  readonly parent: P
  /** The 404 the service answered. */
  readonly error: NotFoundError
  /** Children of it yielded before it vanished. */
  readonly yielded: number
}

/** A page of a list, as the nested iteration reads it. */
export interface ListPage<T> {
  readonly data: readonly T[]
  readonly pagination: Pagination
}

/**
 * What a nested iteration reads from. Its requests carry the caller's own signal; the `signal`
 * given here is the iteration's, aborted when the loop is left. @internal
 */
export interface NestedSource<P, C> {
  /** Page `page` (at {@link PARENT_PAGE_SIZE} a page) of the parents, in the service's order. */
  parents(page: number, signal: AbortSignal): Promise<ListPage<P>>
  /** Page `page` of one parent's children, at `limit` a page. */
  children(parent: P, page: number, signal: AbortSignal): Promise<ListPage<C>>
  parentId(parent: P): string
  childId(child: C): string
  /** How many children the parent says it has (conversations' `message_count`). */
  expectedChildren(parent: P): number
  /** Told once per parent skipped because it vanished. */
  onSkip(skipped: SkippedParent<P>): void
}

/** Parents are read 100 to a page, the most the service allows. */
export const PARENT_PAGE_SIZE = 100
/** Parent pages read ahead of the one being consumed (10,000 parents, a few MB). */
const PARENT_LOOKAHEAD_PAGES = 100

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
}

const CURSOR_VERSION = 1
const cursorSchema = z.tuple([
  z.literal(CURSOR_VERSION),
  z.number().int().min(1).max(100),
  z.number().int().min(0),
  z.number().int().min(0),
  z.string().nullable(),
  z.number().int().min(1),
  z.number().int().min(-1),
  z.string().nullable(),
])

/** Encodes a position as an opaque, URL-safe string. */
function encodeCursor(p: Position): string {
  const fields: z.input<typeof cursorSchema> = [CURSOR_VERSION, p.limit, p.done, p.parent, p.parentId, p.childPage, p.childIndex, p.childId]
  return Buffer.from(JSON.stringify(fields)).toString('base64url')
}

/**
 * Reads a cursor made by `cursor()`.
 * @throws RequestValidationError naming `operation` when it is not one.
 */
export function decodeCursor(cursor: string, operation: string): Position {
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
  return { limit, done, parent, parentId, childPage, childIndex, childId }
}

/** The position before the first child of the first parent. */
export function startPosition(limit: number): Position {
  return { limit, done: 0, parent: 0, parentId: null, childPage: 1, childIndex: -1, childId: null }
}

/** One request of the iteration: made when first needed, launched when the limits allow, then settled. */
interface Slot<T> {
  launched: boolean
  value?: T
  error?: unknown
  /** Resolves once the request has settled (never rejects). */
  readonly settled: Promise<void>
  readonly resolve: () => void
}

function newSlot<T>(): Slot<T> {
  let resolve = (): void => undefined
  const settled = new Promise<void>((done) => (resolve = done))
  return { launched: false, settled, resolve }
}

interface ParentState<P, C> {
  readonly parent: P
  /** Its first child page the consumer needs: 1, or the cursor's page for the parent a run resumes in. */
  readonly firstPage: number
  /** Next child page to launch. */
  nextPage: number
  /** `total_pages` of its latest child page to arrive; `undefined` before the first. */
  totalPages: number | undefined
  readonly pages: Map<number, Slot<ListPage<C>>>
}

/**
 * What `listAll()` returns: an async iterable of every child, in nested-loop order, that also
 * tells how far it got (`progress`), where to resume (`cursor()`), and which parents vanished
 * while it ran (`skipped`). It iterates once. For messages: every message of every conversation
 * (spec, Endpoints 5 and 6, and the Paging rule).
 */
export class ListAllIterable<P, C> implements AsyncIterable<C> {
  readonly #source: NestedSource<P, C>
  readonly #concurrency: number
  readonly #signal: AbortSignal | undefined
  readonly #start: Position
  #position: Position
  #started = false
  #total: number | undefined
  readonly #skipped: SkippedParent<P>[] = []

  /** @internal Made by `listAll()`. */
  constructor(source: NestedSource<P, C>, options: { concurrency: number; start: Position; signal?: AbortSignal | undefined }) {
    this.#source = source
    this.#concurrency = options.concurrency
    this.#signal = options.signal
    this.#start = options.start
    this.#position = options.start
  }

  /** `{ done, total }`: children yielded so far and children expected; see {@link ListAllProgress}. */
  get progress(): ListAllProgress {
    return { done: this.#position.done, total: this.#total }
  }

  /**
   * An opaque string that resumes right after the last child yielded so far: pass it as
   * `listAll({ cursor })`. Taken before anything was yielded, it resumes where this iteration began.
   */
  cursor(): string {
    return encodeCursor(this.#position)
  }

  /** Parents that vanished (404) while the iteration ran; their children were skipped, and each was logged at `warn`. */
  get skipped(): readonly SkippedParent<P>[] {
    return this.#skipped
  }

  /**
   * Every child of every parent, in order. Leaving the loop early aborts what is in flight and
   * sends nothing more; an error surfaces after every child before it.
   * @throws ChatServiceError when iterated a second time, or when the data changed so much since
   * the cursor was taken that its parent or child is no longer where it was; APIUserAbortError when
   * the caller's signal fires; and the errors of the list requests (APIError subclasses but a 404 on
   * a parent's children, which skips it; APIConnectionError, APITimeoutError;
   * ResponseValidationError; ChatServiceError once the client is closed).
   */
  [Symbol.asyncIterator](): AsyncGenerator<C, void, undefined> {
    if (this.#started)
      throw new ChatServiceError('A listAll() iterable iterates once: call listAll() again, or listAll({ cursor }) to resume')
    this.#started = true
    return this.#run()
  }

  async *#run(): AsyncGenerator<C, void, undefined> {
    const run = new Run(this.#source, this.#concurrency, this.#start, (total) => (this.#total = total))
    try {
      for (let parentIndex = this.#start.parent; ; parentIndex++) {
        const listed = await run.parentAt(parentIndex)
        if (listed === undefined) return
        parentIndex = listed.index
        const { parent } = listed
        const resuming = listed.resumed && this.#start.parentId !== null
        let page = resuming ? this.#start.childPage : 1
        let yielded = 0
        for (;;) {
          const result = await run.childPage(parentIndex, page)
          if (result instanceof NotFoundError) {
            this.#skip({ parent, error: result, yielded }, run)
            break
          }
          let from = 0
          if (resuming && page === this.#start.childPage && this.#start.childId !== null) {
            const at = result.data.findIndex((child) => this.#source.childId(child) === this.#start.childId)
            if (at === -1) throw staleCursor(`message ${this.#start.childId} is no longer on page ${page} of its conversation`)
            from = at + 1
          }
          for (let index = from; index < result.data.length; index++) {
            // Stop at once when the caller aborts, not after the pages already fetched.
            if (this.#signal?.aborted === true) throw new APIUserAbortError("listAll() was aborted by the caller's signal")
            const child = result.data[index] as C
            this.#position = {
              limit: this.#start.limit,
              done: this.#position.done + 1,
              parent: parentIndex,
              parentId: this.#source.parentId(parent),
              childPage: page,
              childIndex: index,
              childId: this.#source.childId(child),
            }
            yielded++
            yield child
          }
          // The spec's paging rule: read page p+1 only while p < total_pages of the latest response.
          if (page >= result.pagination.total_pages) break
          page++
        }
        run.leave(parentIndex)
      }
    } finally {
      run.stop()
    }
  }

  #skip(skipped: SkippedParent<P>, run: Run<P, C>): void {
    this.#skipped.push(skipped)
    run.skip(skipped)
    this.#source.onSkip(skipped)
  }
}

function staleCursor(what: string): StaleCursorError {
  return new StaleCursorError(
    `Cannot resume from this cursor: ${what}, so the data changed since the cursor was taken and resuming could skip or repeat items. ` +
      'Start again without a cursor (offset paging cannot follow items that moved).',
  )
}

/** The requests of one iteration: what is launched, what has arrived, what the consumer took. */
class Run<P, C> {
  readonly #source: NestedSource<P, C>
  readonly #concurrency: number
  readonly #window: number
  readonly #cap: number
  readonly #abort = new AbortController()
  readonly #signal: AbortSignal
  readonly #start: Position
  readonly #setTotal: (total: number | undefined) => void

  readonly #parentPages = new Map<number, Slot<ListPage<P>>>()
  #parentTotalPages: number | undefined
  #nextParentPage: number
  #parentPagesInFlight = 0
  #parentPagesRead = 0
  /** The parent page the consumer waits for, if any. */
  #awaitedParentPage: number | undefined
  /** Index of the first parent this run yields from: the start, or where the cursor's parent was found. */
  #firstIndex: number | undefined
  /** Until the first parent has been handed out. */
  #askedFirst = true
  readonly #parents = new Map<number, ParentState<P, C>>()
  /** The parent and child page the consumer is on (or waits for). */
  #currentParent: number
  #currentPage: number
  #inFlight = 0
  /** Child pages launched and not yet consumed or dropped. */
  #held = 0
  /** Children expected from the start on, as far as the parent pages read so far tell. */
  #expected = 0
  #stopped = false

  constructor(source: NestedSource<P, C>, concurrency: number, start: Position, setTotal: (total: number | undefined) => void) {
    this.#source = source
    this.#concurrency = concurrency
    this.#window = 2 * concurrency
    this.#cap = 4 * concurrency
    // The source's requests carry the caller's signal already; this one is the run's own.
    this.#signal = this.#abort.signal
    this.#start = start
    this.#setTotal = setTotal
    this.#nextParentPage = pageOf(start.parent)
    this.#currentParent = start.parent
    this.#currentPage = start.childPage
  }

  /**
   * The parent at `index`, or the next one listed, once its page arrives; `undefined` past the
   * end. `resumed` marks the parent the cursor points at (found by id within its page).
   */
  async parentAt(index: number): Promise<{ index: number; parent: P; resumed: boolean } | undefined> {
    for (;;) {
      const page = pageOf(index)
      if (this.#parentTotalPages !== undefined && page > Math.max(1, this.#parentTotalPages)) return undefined
      const slot = this.#parentSlot(page)
      this.#awaitedParentPage = page
      this.#pump()
      await slot.settled
      this.#awaitedParentPage = undefined
      if (slot.error !== undefined) throw slot.error as Error
      const first = this.#firstIndex as number
      // The first parent asked for is the cursor's: wherever it was found on its page.
      if (this.#askedFirst) index = first
      this.#askedFirst = false
      const state = this.#parents.get(index)
      if (state !== undefined) {
        this.#currentParent = index
        this.#currentPage = state.firstPage
        this.#pump()
        return { index, parent: state.parent, resumed: index === first }
      }
      // Fewer parents on this page than a full page holds: the list ends here, or on a later page.
      if (page >= (this.#parentTotalPages ?? 0)) return undefined
      index = page * PARENT_PAGE_SIZE
    }
  }

  /** Child page `page` of the parent at `parentIndex`, once it arrives; a NotFoundError when the parent vanished. */
  async childPage(parentIndex: number, page: number): Promise<ListPage<C> | NotFoundError> {
    const state = this.#parents.get(parentIndex) as ParentState<P, C>
    this.#currentParent = parentIndex
    this.#currentPage = page
    const slot = state.pages.get(page) ?? this.#childSlot(state, page)
    this.#pump()
    await slot.settled
    state.pages.delete(page)
    this.#held--
    this.#pump()
    if (slot.error instanceof NotFoundError) return slot.error
    if (slot.error !== undefined) throw slot.error as Error
    return slot.value as ListPage<C>
  }

  /** The consumer is done with a parent: drop whatever of it was fetched ahead, and the parent page slots behind it. */
  leave(parentIndex: number): void {
    const state = this.#parents.get(parentIndex)
    if (state === undefined) return
    for (const slot of state.pages.values()) if (slot.launched) this.#held--
    this.#parents.delete(parentIndex)
    for (const page of this.#parentPages.keys()) if (page < pageOf(parentIndex)) this.#parentPages.delete(page)
    this.#pump()
  }

  /** A parent vanished: its remaining children are not expected any more. */
  skip(skipped: SkippedParent<P>): void {
    this.#expected -= Math.max(0, this.#source.expectedChildren(skipped.parent) - skipped.yielded)
    this.#updateTotal()
  }

  /** Aborts everything in flight; nothing more is sent. */
  stop(): void {
    this.#stopped = true
    this.#abort.abort(SDK_CANCELLED)
  }

  /** Launches the earliest needed requests while fewer than `concurrency` are in flight. */
  #pump(): void {
    while (!this.#stopped && this.#inFlight < this.#concurrency && this.#launchNext()) {
      // each pass launched one request
    }
  }

  /**
   * Launches one request, if one is due, in this order: what the consumer waits for (a parent
   * page, or a child page: whatever the window and the cap); the next parent page while none is in
   * flight (one slot at most, so `total` gets known early without starving the children); the
   * earliest child page the consumer will need, within the window and the cap; the parent page
   * that lists the parents it will need next.
   */
  #launchNext(): boolean {
    const awaited = this.#awaitedParentPage
    if (awaited !== undefined && !this.#parentSlot(awaited).launched) return this.#launchParentPage(awaited)
    const current = this.#parents.get(this.#currentParent)
    if (current !== undefined && awaited === undefined && this.#currentPage === current.nextPage) {
      return this.#launchChildPage(current, this.#currentPage)
    }
    if (this.#launchParentPageInBackground()) return true
    let ahead = 0 // child pages between the consumer's page and the candidate, in consumption order
    for (let index = this.#currentParent; ahead < this.#window; index++) {
      const state = this.#parents.get(index)
      if (state === undefined) return this.#launchParentPageFor(index)
      const from = index === this.#currentParent ? this.#currentPage : state.firstPage
      // Until its first page tells `total_pages`, a parent is known to hold just that page.
      const last = state.totalPages === undefined ? from : Math.max(from, state.totalPages)
      for (let page = from; page <= last && ahead < this.#window; page++, ahead++) {
        if (page < state.nextPage) continue // launched already
        return this.#held < this.#cap && this.#launchChildPage(state, page)
      }
    }
    return false
  }

  /** Launches the parent page that lists parent `index`, when it exists and is not launched yet. */
  #launchParentPageFor(index: number): boolean {
    const page = pageOf(index)
    if (this.#parentTotalPages === undefined || page > this.#parentTotalPages || this.#parentSlot(page).launched) return false
    return this.#launchParentPage(page)
  }

  #launchParentPageInBackground(): boolean {
    const page = this.#nextParentPage
    if (this.#parentPagesInFlight > 0 || this.#parentTotalPages === undefined || page > this.#parentTotalPages) return false
    if (page > pageOf(this.#currentParent) + PARENT_LOOKAHEAD_PAGES || this.#parentSlot(page).launched) return false
    return this.#launchParentPage(page)
  }

  #parentSlot(page: number): Slot<ListPage<P>> {
    let slot = this.#parentPages.get(page)
    if (slot === undefined) this.#parentPages.set(page, (slot = newSlot()))
    return slot
  }

  #childSlot(state: ParentState<P, C>, page: number): Slot<ListPage<C>> {
    let slot = state.pages.get(page)
    if (slot === undefined) state.pages.set(page, (slot = newSlot()))
    return slot
  }

  #launchParentPage(page: number): true {
    this.#nextParentPage = Math.max(this.#nextParentPage, page + 1)
    this.#parentPagesInFlight++
    const slot = this.#parentSlot(page)
    this.#launch(
      slot,
      this.#source.parents(page, this.#signal),
      (result) => {
        this.#parentTotalPages = result.pagination.total_pages
        this.#parentPagesRead++
        const first = (page - 1) * PARENT_PAGE_SIZE
        if (this.#firstIndex === undefined) this.#firstIndex = first + this.#findStart(result.data)
        const firstIndex = this.#firstIndex
        result.data.forEach((parent, offset) => {
          const index = first + offset
          if (index < firstIndex) return
          const resumed = index === firstIndex
          const firstPage = resumed ? this.#start.childPage : 1
          this.#parents.set(index, { parent, firstPage, nextPage: firstPage, totalPages: undefined, pages: new Map() })
          let expected = this.#source.expectedChildren(parent)
          if (resumed && this.#start.childIndex >= 0) {
            expected -= (this.#start.childPage - 1) * this.#start.limit + this.#start.childIndex + 1
          }
          this.#expected += Math.max(0, expected)
        })
        this.#updateTotal()
        // The parents live in #parents now (and leave it as the consumer passes them): the page
        // itself need not be kept, or every parent listed would stay in memory until the end.
        delete slot.value
      },
      () => this.#parentPagesInFlight--,
    )
    return true
  }

  #launchChildPage(state: ParentState<P, C>, page: number): true {
    state.nextPage = page + 1
    this.#held++
    this.#launch(
      this.#childSlot(state, page),
      this.#source.children(state.parent, page, this.#signal),
      (result) => {
        state.totalPages = result.pagination.total_pages
      },
      () => undefined,
    )
    return true
  }

  /**
   * Where on the cursor's parent page the cursor's parent now is: its index there, found by id
   * (it may have moved within the page). A fresh start has no id: the start index's place.
   * @throws ChatServiceError when it is not on the page any more (the list changed too much).
   */
  #findStart(parents: readonly P[]): number {
    const id = this.#start.parentId
    if (id === null) return this.#start.parent % PARENT_PAGE_SIZE
    const at = parents.findIndex((parent) => this.#source.parentId(parent) === id)
    if (at === -1) throw staleCursor(`conversation ${id} is no longer on page ${pageOf(this.#start.parent)} of the conversation list`)
    return at
  }

  /** Counts a request in flight until it settles, keeps its outcome (an error `onValue` throws included), and launches more. */
  #launch<T>(slot: Slot<T>, request: Promise<T>, onValue: (value: T) => void, onSettled: () => void): void {
    slot.launched = true
    this.#inFlight++
    request
      .then((value) => {
        slot.value = value
        onValue(value)
      })
      .catch((error: unknown) => {
        slot.error = error
      })
      .finally(() => {
        this.#inFlight--
        onSettled()
        slot.resolve()
        this.#pump()
      })
  }

  /** `total` is known once every parent page from the start one to the last has been read. */
  #updateTotal(): void {
    const last = this.#parentTotalPages
    const pages = last === undefined ? Infinity : Math.max(1, last) - pageOf(this.#start.parent) + 1
    this.#setTotal(this.#parentPagesRead >= pages ? this.#start.done + this.#expected : undefined)
  }
}

/** The parent page (1-based) that lists the parent at `index`. */
function pageOf(index: number): number {
  return Math.floor(index / PARENT_PAGE_SIZE) + 1
}
