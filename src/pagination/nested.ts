/**
 * The scheduler behind `listAll` and `listNew`: reads a list of parents (conversations) page by
 * page, asks for each parent, once, in list order, whether and from where to read its children
 * (messages), and fetches those child pages with up to `concurrency` requests in flight for the
 * whole run, in bounded memory, for a consumer that takes them in exactly the order of the nested
 * loop. One engine, so that concurrency, read-ahead, early exit, abort and error order behave the
 * same in every iteration built on it.
 *
 * Both lists are read exactly once while they move, by the scan of list-scan.ts: the parent list
 * by one scan for the run (with its second scan, when the iteration asks for one: its new parents
 * come after all the first scan's), each parent's children by one scan of their own. A page that
 * shows its list moved is repaired before anything of it is planned or yielded.
 *
 * How it schedules: the pages the consumer will need are known, in order, as far as the responses
 * so far tell (a parent's later pages once one of its pages has told `total_pages`; a parent's
 * first page as soon as the parent is listed and planned). Whenever a request settles or the
 * consumer takes a page, requests are launched while fewer than `concurrency` are in flight, in
 * this order: a page a scan needs read anew to repair a shift (parents, then children); the parent
 * page the consumer waits for; the child page the consumer waits for; the next parent page while
 * none is in flight (so the scan keeps moving and `total` gets known early); the earliest needed
 * child pages within `2 × concurrency` pages of the consumer and while fewer than
 * `4 × concurrency` are fetched and not consumed; then further parent pages, up to 100 pages
 * (10,000 parents) ahead of the consumer, so that a scan where few parents need reading (`listNew`
 * on a quiet night) uses the whole concurrency. A huge parent at the head gets all the
 * parallelism, nothing runs far ahead of the consumer, and parents that need no reading cost no
 * memory.
 *
 * Parent pages are processed in the order the scan reads them whatever order they arrive in: the
 * paging rules (rules.ts) are checked in that order, a parent listed twice is planned once, and an
 * error on a parent page surfaces after every child before it.
 */
import { APIUserAbortError, NotFoundError } from '../errors/errors.ts'
import { SDK_CANCELLED } from '../internal/cancellation.ts'
import { GrowthWatch } from './growth-watch.ts'
import { ListScan, type FetchedPage, type ListScanOptions, type ScanReport } from './list-scan.ts'
import type { PageLike } from './rules.ts'

/** What an iteration over parents and their children reads. Requests carry the caller's own signal; `signal` is the run's own, aborted when it stops. */
export interface NestedReader<P, C> {
  /** Page `page` (at {@link PARENT_PAGE_SIZE} a page) of the parents, in the service's order; checked response by response. */
  parents(page: number, signal: AbortSignal): Promise<FetchedPage<PageOf<P>>>
  /** Page `page` of one parent's children at the iteration's limit; checked response by response. */
  children(parent: P, page: number, signal: AbortSignal): Promise<FetchedPage<PageOf<C>>>
  parentId(parent: P): string
  childId(child: C): string
  /** When the child was made (an ISO 8601 time: messages' `created_at`); see growth-watch.ts. */
  childTime(child: C): string | undefined
  /** How many children the parent says it has (conversations' `message_count`). */
  expectedChildren(parent: P): number
}

/** A page body of `T`s. */
export interface PageOf<T> extends PageLike {
  readonly data: readonly T[]
}

/** Where and how a parent's children are read. */
export interface ChildPlan {
  /** First child page to request. */
  readonly firstPage: number
  /** Children this plan expects to yield (for progress); may be off when counts are stale. */
  readonly expected: number
}

/** A parent the consumer is to read, with its plan. */
export interface PlannedParent<P, Plan extends ChildPlan = ChildPlan> {
  /** Its index in the parent list (0-based, in the list as it was when its page was read). */
  readonly index: number
  readonly parent: P
  readonly plan: Plan
  /** The scan that listed it: 1, or 2 for a parent only the second scan found. */
  readonly scan: number
}

/** Where a run starts in the parent list. */
export interface RunStart {
  /** Index (0-based) of the first parent to plan; parents before it are passed over. */
  readonly index: number
  /**
   * Start at the parent with this id instead, looked for on the page that holds `index` (it may
   * have moved within that page); `stale(what)` is thrown when it is not there (and when the list
   * shifted so that the scan would have to read before that page).
   */
  readonly resume?: { readonly parentId: string; readonly stale: (what: string) => Error } | undefined
}

/** How a run reads its parents; see {@link NestedRun}. */
export interface RunOptions<P, Plan extends ChildPlan> {
  readonly concurrency: number
  readonly start: RunStart
  /**
   * How to read `parent` (listed at `index`), or `undefined` not to read it. Asked once per parent,
   * in list order. `resumed` marks the parent the run starts at when it starts at a parent id.
   */
  readonly plan: (parent: P, index: number, resumed: boolean) => Plan | undefined
  /** Whether to scan the parent list a second time once the first scan ends; see `ListScanOptions.rescan`. */
  readonly rescan: ListScanOptions['rescan']
  /** The error for a parent list that will not hold still (`'stop'`: end the scan where it is, {@link NestedRun.complete} false). */
  readonly unstableParents: (report: ScanReport) => Error | 'stop'
  /** The error for a parent's children that will not hold still. */
  readonly unstableChildren: (report: ScanReport) => Error
}

/** Parents are read 100 to a page, the most the service allows. */
export const PARENT_PAGE_SIZE = 100
/** Parent pages read ahead of the one being consumed (10,000 parents). */
const PARENT_LOOKAHEAD_PAGES = 100

/** One request of the run: made when first needed, launched when the limits allow, then settled. */
interface Slot<T> {
  launched: boolean
  done: boolean
  /** The run's clock when it was launched (see `ListScan.clock`). */
  sentAt: number
  value?: T
  error?: unknown
  /** Resolves once the request has settled (never rejects). */
  readonly settled: Promise<void>
  readonly resolve: () => void
}

function newSlot<T>(): Slot<T> {
  let resolve = (): void => undefined
  const settled = new Promise<void>((done) => (resolve = done))
  return { launched: false, done: false, sentAt: 0, settled, resolve }
}

interface ParentState<P, C, Plan extends ChildPlan> extends PlannedParent<P, Plan> {
  /** Its first child page the consumer needs (the plan's, or 1 after a restart). */
  firstPage: number
  /** Next child page to launch ahead. */
  nextPage: number
  /** `total_pages` of its latest child page to arrive; `undefined` before the first. */
  totalPages: number | undefined
  /** Child pages launched ahead (or waited for), by page number. */
  pages: Map<number, Slot<FetchedPage<PageOf<C>>>>
}

/** A request a scan needs made anew (a repair), launched before anything else. */
interface FreshRead<T> {
  readonly page: number
  readonly slot: Slot<T>
}

/** The parent page (1-based) that lists the parent at `index`. */
export function parentPageOf(index: number): number {
  return Math.floor(index / PARENT_PAGE_SIZE) + 1
}

/**
 * One run over the parent list and the children it plans: what is launched, what has arrived,
 * what the consumer took. The consumer calls {@link NestedRun.nextParent}, then
 * {@link NestedRun.childPage} for each page its child scan reads, then {@link NestedRun.leave};
 * and {@link NestedRun.stop} when it is done, early or not.
 */
export class NestedRun<P, C, Plan extends ChildPlan = ChildPlan> {
  readonly #reader: NestedReader<P, C>
  readonly #options: RunOptions<P, Plan>
  readonly #concurrency: number
  readonly #window: number
  readonly #cap: number
  readonly #abort = new AbortController()
  readonly #signal: AbortSignal
  /** The clock of every scan of the run: launches read it, accepted pages advance it. */
  readonly ticks = { value: 0 }

  readonly #scan: ListScan
  readonly #parentPages = new Map<number, Slot<FetchedPage<PageOf<P>>>>()
  #freshParent: FreshRead<FetchedPage<PageOf<P>>> | undefined
  #freshChild: (FreshRead<FetchedPage<PageOf<C>>> & { readonly state: ParentState<P, C, Plan> }) | undefined
  /** The scan's pass the parent pages in the map were launched for. */
  #pass = 1
  #nextParentPage: number
  #parentPagesInFlight = 0
  /** `total_pages` of the last parent page processed. */
  #parentTotalPages: number | undefined
  /** The error of the parent page the scan stopped at, surfaced once the consumer gets there. */
  #scanError: unknown
  #scanDone = false
  #complete = true
  /** Whether the consumer waits for the next parent page. */
  #awaitingParents = false
  /** Index on the start page of the resumed parent, once found (-1: none). */
  #resumedOffset = -1

  /** Planned parents in list order; the consumer is at `#head`. */
  #planned: (ParentState<P, C, Plan> | undefined)[] = []
  #head = 0
  #nextIndex = 0
  readonly #byIndex = new Map<number, ParentState<P, C, Plan>>()
  /** The child page of the head parent the consumer is on, waits for, or will ask for first (0 while there is no head). */
  #currentPage = 0
  #inFlight = 0
  /** Child pages launched and not yet consumed or dropped. */
  #held = 0
  /** Children the plans expect, from the start on. */
  #expected = 0
  #stopped = false
  /** What the children's scans repaired, summed over the parents read. */
  #children = { scans: 1, shifts: 0, rereads: 0, recovered: 0, repeated: 0 }

  constructor(reader: NestedReader<P, C>, options: RunOptions<P, Plan>) {
    this.#reader = reader
    this.#options = options
    this.#concurrency = options.concurrency
    this.#window = 2 * options.concurrency
    this.#cap = 4 * options.concurrency
    // The reader's requests carry the caller's signal already; this one is the run's own.
    this.#signal = this.#abort.signal
    const { start } = options
    const startPage = parentPageOf(start.index)
    this.#nextParentPage = startPage
    this.#scan = new ListScan({
      start: startPage,
      idOf: (parent) => reader.parentId(parent as P),
      ticks: this.ticks,
      from: (body) => {
        const first = (startPage - 1) * PARENT_PAGE_SIZE
        const resume = start.resume
        if (resume === undefined) return start.index - first
        const offset = body.data.findIndex((parent) => reader.parentId(parent as P) === resume.parentId)
        if (offset === -1) throw resume.stale(`conversation ${resume.parentId} is no longer on page ${startPage} of the conversation list`)
        this.#resumedOffset = offset
        return offset
      },
      rescan: options.rescan,
      ...(start.resume === undefined
        ? {}
        : { beforeStart: () => (start.resume as NonNullable<RunStart['resume']>).stale('the conversation list shifted before its page') }),
      unstable: (report) => {
        const outcome = options.unstableParents(report)
        return outcome === 'stop' ? STOP : outcome
      },
    })
  }

  /** The error for children that will not hold still. */
  unstableChildren(report: ScanReport): Error {
    return this.#options.unstableChildren(report)
  }

  /**
   * Children the plans expect in all, once the parent list has been read to its end (by the first
   * scan: a second scan adds what it finds); `undefined` until then.
   */
  get expected(): number | undefined {
    return this.#scanDone || this.#scan.pass > 1 ? this.#expected : undefined
  }

  /** Whether the parent scan is done (every pass read to its end, or stopped). */
  get scanDone(): boolean {
    return this.#scanDone
  }

  /** Whether the parent scan read the list to its end (false when it stopped on a list that would not hold still). */
  get complete(): boolean {
    return this.#complete
  }

  /** What the parent scan repaired so far. */
  get parentRepairs(): ScanReport {
    return this.#scan.report
  }

  /** What the children's scans repaired so far, summed (`scans`: 2 once any parent's children were read a second time). */
  get childRepairs(): ScanReport {
    return { ...this.#children }
  }

  /** The parents planned and not yet left, from the current one on, in order. */
  remaining(): P[] {
    const parents: P[] = []
    for (let position = this.#head; position < this.#planned.length; position++) {
      const state = this.#planned[position]
      if (state !== undefined) parents.push(state.parent)
    }
    return parents
  }

  /** Whether the parent scan listed a parent with this id (in either pass). */
  listed(id: string): boolean {
    return this.#scan.has(id)
  }

  /** Changes the children expected (a parent skipped, or read again from its start). */
  adjustExpected(delta: number): void {
    this.#expected += delta
  }

  /**
   * The next parent to read, in list order, once the parent page that lists it has been processed;
   * `undefined` at the end of the list.
   * @throws the error of a parent page (a failed request, a page that breaks the paging rules, a
   * list that will not hold still), after every parent before it; the `resume.stale` error when the
   * start parent is not on its page.
   */
  async nextParent(): Promise<PlannedParent<P, Plan> | undefined> {
    for (;;) {
      const state = this.#planned[this.#head]
      // A parent only the second scan found is handed out once that scan is done: what is left of
      // them is then known (a cursor taken in them holds them all).
      if (state !== undefined && (state.scan === 1 || this.#scanDone || this.#scanError !== undefined)) {
        this.#pump()
        return state
      }
      if (this.#scanError !== undefined) throw this.#scanError as Error
      if (this.#scanDone) return undefined
      const slot = this.#wantedParentSlot()
      if (slot === undefined) {
        this.#processParentPages()
        continue
      }
      this.#awaitingParents = true
      this.#pump()
      await slot.settled
      this.#awaitingParents = false
      this.#processParentPages()
    }
  }

  /**
   * Child page `page` of the current parent, once it arrives (`fresh`: a request made now, for a
   * repair, not one launched ahead); a NotFoundError when the parent vanished (404).
   */
  async childPage(
    parent: PlannedParent<P, Plan>,
    page: number,
    fresh: boolean,
  ): Promise<{ readonly fetched: FetchedPage<PageOf<C>>; readonly sentAt: number } | NotFoundError> {
    const state = this.#byIndex.get(parent.index) as ParentState<P, C, Plan>
    let slot: Slot<FetchedPage<PageOf<C>>>
    if (fresh) {
      const stale = state.pages.get(page)
      if (stale !== undefined) {
        state.pages.delete(page)
        if (stale.launched) this.#held--
      }
      slot = newSlot()
      this.#freshChild = { page, slot, state }
    } else {
      this.#currentPage = page
      slot = state.pages.get(page) ?? this.#childSlot(state, page)
      // A page before the ones launched ahead that has no request of its own (never expected: the
      // scan asks again for a page it took with `fresh`): it is launched now, not waited for forever.
      if (!slot.launched && page < state.nextPage) {
        state.pages.delete(page)
        this.#held++ // given back below, as for any page taken
        this.#freshChild = { page, slot, state }
      }
    }
    this.#pump()
    await slot.settled
    if (!fresh) {
      state.pages.delete(page)
      this.#held--
    }
    this.#pump()
    if (slot.error instanceof NotFoundError) return slot.error
    if (slot.error !== undefined) throw slot.error as Error
    return { fetched: slot.value as FetchedPage<PageOf<C>>, sentAt: slot.sentAt }
  }

  /** Forgets what was fetched of the current parent and reads it again from page 1 (its next {@link NestedRun.childPage} asks for page 1). */
  restart(parent: PlannedParent<P, Plan>): void {
    const state = this.#byIndex.get(parent.index) as ParentState<P, C, Plan>
    this.#drop(state)
    state.firstPage = 1
    state.nextPage = 1
    state.totalPages = undefined
    this.#currentPage = 1
    this.#pump()
  }

  /** The consumer is done with the current parent (its children's scan reported `repairs`): drop whatever of it was fetched ahead. */
  leave(parent: PlannedParent<P, Plan>, repairs?: ScanReport): void {
    if (repairs !== undefined) {
      this.#children.scans = Math.max(this.#children.scans, repairs.scans)
      this.#children.shifts += repairs.shifts
      this.#children.rereads += repairs.rereads
      this.#children.recovered += repairs.recovered
      this.#children.repeated += repairs.repeated
    }
    const state = this.#byIndex.get(parent.index)
    if (state === undefined) return
    this.#drop(state)
    this.#byIndex.delete(parent.index)
    this.#planned[this.#head] = undefined
    this.#head++
    // Keep the array from growing with every parent of a long run.
    if (this.#head >= 1024 && this.#head * 2 >= this.#planned.length) {
      this.#planned = this.#planned.slice(this.#head)
      this.#head = 0
    }
    this.#currentPage = this.#planned[this.#head]?.firstPage ?? 0
    this.#pump()
  }

  /** Aborts everything in flight; nothing more is sent. */
  stop(): void {
    this.#stopped = true
    this.#abort.abort(SDK_CANCELLED)
  }

  #drop(state: ParentState<P, C, Plan>): void {
    for (const slot of state.pages.values()) if (slot.launched) this.#held--
    state.pages = new Map()
  }

  /** The slot of the parent page the scan needs next (made if needed), or `undefined` when it needs none (a page it kept). */
  #wantedParentSlot(): Slot<FetchedPage<PageOf<P>>> | undefined {
    const read = this.#scan.next()
    if (read === undefined || read.held !== undefined) return undefined
    if (this.#scan.pass !== this.#pass) {
      // A new pass reads every page anew: what was launched ahead for the last one is not used.
      this.#pass = this.#scan.pass
      this.#parentPages.clear()
      this.#nextParentPage = read.page
    }
    if (read.fresh) {
      if (this.#freshParent?.page !== read.page) {
        this.#parentPages.delete(read.page)
        this.#freshParent = { page: read.page, slot: newSlot() }
      }
      return this.#freshParent.slot
    }
    return this.#parentSlot(read.page)
  }

  /** Processes the parent pages the scan needs that have arrived, in its order, up to the first one missing or failed. */
  #processParentPages(): void {
    for (;;) {
      if (this.#scanDone || this.#scanError !== undefined) return
      const read = this.#scan.next()
      if (read === undefined) {
        this.#scanDone = true
        return
      }
      let fetched: FetchedPage<PageOf<P>>
      let sentAt: number
      if (read.held !== undefined) {
        fetched = read.held.fetched as FetchedPage<PageOf<P>>
        sentAt = read.held.sentAt
      } else {
        const slot = this.#wantedParentSlot() as Slot<FetchedPage<PageOf<P>>>
        if (!slot.done) return
        if (this.#freshParent?.slot === slot) this.#freshParent = undefined
        else this.#parentPages.delete(read.page)
        if (slot.error !== undefined) {
          this.#scanError = slot.error
          return
        }
        fetched = slot.value as FetchedPage<PageOf<P>>
        sentAt = slot.sentAt
      }
      try {
        this.#processParentPage(fetched, sentAt)
      } catch (error) {
        if (error === STOP) {
          this.#scanDone = true
          this.#complete = false
          return
        }
        this.#scanError = error
        return
      }
    }
  }

  #processParentPage(fetched: FetchedPage<PageOf<P>>, sentAt: number): void {
    const pass = this.#scan.pass
    const step = this.#scan.accept(fetched, sentAt)
    const { page, limit, total_pages: totalPages } = fetched.body.pagination
    this.#parentTotalPages = totalPages
    const first = (page - 1) * limit
    for (const offset of step.items) {
      const parent = fetched.body.data[offset] as P
      const resumed = pass === 1 && offset === this.#resumedOffset && page === parentPageOf(this.#options.start.index)
      if (resumed) this.#resumedOffset = -1
      // Its place in the list as read; a parent found by a later pass or a repair comes after every one planned before it.
      const index = Math.max(first + offset, this.#nextIndex)
      this.#nextIndex = index + 1
      const plan = this.#options.plan(parent, index, resumed)
      if (plan === undefined) continue
      const state: ParentState<P, C, Plan> = {
        index,
        parent,
        plan,
        scan: pass,
        firstPage: plan.firstPage,
        nextPage: plan.firstPage,
        totalPages: undefined,
        pages: new Map(),
      }
      this.#expected += plan.expected
      this.#planned.push(state)
      this.#byIndex.set(index, state)
      // The consumer's next parent: its first page is the one it will ask for.
      if (this.#planned.length - 1 === this.#head) this.#currentPage = state.firstPage
    }
    if (this.#scan.done) this.#scanDone = true
  }

  /** Launches the earliest needed requests while fewer than `concurrency` are in flight. */
  #pump(): void {
    while (!this.#stopped && this.#inFlight < this.#concurrency && this.#launchNext()) {
      // each pass launched one request
    }
  }

  /** Launches one request, if one is due, in the order given at the top of this file. */
  #launchNext(): boolean {
    const freshParent = this.#freshParent
    if (freshParent !== undefined && !freshParent.slot.launched) {
      this.#launchParent(freshParent.slot, freshParent.page)
      return true
    }
    const freshChild = this.#freshChild
    if (freshChild !== undefined && !freshChild.slot.launched) {
      this.#freshChild = undefined
      this.#launch(freshChild.slot, this.#reader.children(freshChild.state.parent, freshChild.page, this.#signal), () => undefined)
      return true
    }
    const current = this.#planned[this.#head]
    if (current === undefined) {
      if (this.#awaitingParents) {
        const slot = this.#wantedParentSlot()
        const read = this.#scan.next()
        if (slot !== undefined && !slot.launched && read !== undefined) {
          this.#launchParent(slot, read.page)
          return true
        }
      }
    } else if (this.#currentPage >= current.nextPage) {
      return this.#launchChildPage(current, this.#currentPage)
    }
    if (this.#parentPagesInFlight === 0 && this.#launchParentPage(this.#nextParentPage)) return true
    let ahead = 0 // child pages between the consumer's page and the candidate, in consumption order
    for (let position = this.#head; position < this.#planned.length && ahead < this.#window; position++) {
      const state = this.#planned[position] as ParentState<P, C, Plan>
      const from = position === this.#head ? this.#currentPage : state.firstPage
      // Until one of its pages tells `total_pages`, a parent is known to hold just its first page.
      const last = state.totalPages === undefined ? from : Math.max(from, state.totalPages)
      for (let page = from; page <= last && ahead < this.#window; page++, ahead++) {
        if (page < state.nextPage) continue // launched already
        return this.#held < this.#cap && this.#launchChildPage(state, page)
      }
    }
    return this.#launchParentPage(this.#nextParentPage)
  }

  /**
   * Launches parent page `page` ahead when the scan may read it: not launched yet, not read yet in
   * this pass, within the latest `total_pages` processed, within the look-ahead, and not past a
   * page that failed.
   */
  #launchParentPage(page: number): boolean {
    if (this.#scanDone || this.#scanError !== undefined) return false
    const highest = this.#scan.highest
    if (page <= highest) {
      this.#nextParentPage = highest + 1
      return false
    }
    const slot = this.#parentSlot(page)
    if (slot.launched) return false
    const known = this.#parentTotalPages
    if (known !== undefined && page > Math.max(known, highest + 1)) return false
    // Before the first page has told `total_pages`, only the start page is read.
    if (known === undefined && page > parentPageOf(this.#options.start.index)) return false
    const consumerIndex = this.#planned[this.#head]?.index
    const from = consumerIndex === undefined ? highest : parentPageOf(consumerIndex)
    if (page > from + PARENT_LOOKAHEAD_PAGES) return false
    this.#nextParentPage = Math.max(this.#nextParentPage, page + 1)
    this.#launchParent(slot, page)
    return true
  }

  #launchParent(slot: Slot<FetchedPage<PageOf<P>>>, page: number): void {
    this.#parentPagesInFlight++
    this.#launch(slot, this.#reader.parents(page, this.#signal), () => {
      this.#parentPagesInFlight--
      this.#processParentPages()
    })
  }

  #launchChildPage(state: ParentState<P, C, Plan>, page: number): true {
    state.nextPage = page + 1
    this.#held++
    const slot = this.#childSlot(state, page)
    const pages = state.pages
    this.#launch(slot, this.#reader.children(state.parent, page, this.#signal), () => {
      // A page of a restarted parent's earlier reading tells nothing about the new one.
      if (slot.value !== undefined && state.pages === pages) state.totalPages = slot.value.body.pagination.total_pages
    })
    return true
  }

  #parentSlot(page: number): Slot<FetchedPage<PageOf<P>>> {
    let slot = this.#parentPages.get(page)
    if (slot === undefined) this.#parentPages.set(page, (slot = newSlot()))
    return slot
  }

  #childSlot(state: ParentState<P, C, Plan>, page: number): Slot<FetchedPage<PageOf<C>>> {
    let slot = state.pages.get(page)
    if (slot === undefined) state.pages.set(page, (slot = newSlot()))
    return slot
  }

  /** Counts a request in flight until it settles, keeps its outcome, and launches more. */
  #launch<T>(slot: Slot<T>, request: Promise<T>, onSettled: () => void): void {
    slot.launched = true
    slot.sentAt = this.ticks.value
    this.#inFlight++
    request
      .then(
        (value) => {
          slot.value = value
        },
        (error: unknown) => {
          slot.error = error
        },
      )
      .finally(() => {
        this.#inFlight--
        slot.done = true
        onSettled()
        slot.resolve()
        this.#pump()
      })
  }
}

/** Thrown by the parent scan's `unstable` when the run stops the scan instead (listNew). */
const STOP = new Error('the parent scan stops here')

/** What an iteration built on a {@link NestedRun} does at each step of {@link walk}. */
export interface WalkHooks<P, C, Plan extends ChildPlan> {
  /** The caller's signal: checked before each child is yielded, so an abort stops at once. */
  readonly signal: AbortSignal | undefined
  /** Message of the APIUserAbortError thrown when `signal` fires. */
  readonly abortMessage: string
  /**
   * Called with a parent's first page (its plan's `firstPage`): the index on it to yield from, or
   * `'restart'` to read the parent again from its first child.
   */
  start(parent: PlannedParent<P, Plan>, page: number, body: PageOf<C>): number | 'restart'
  /**
   * When a repair of the parent's children would have to read before its first page: the error to
   * throw, or `'restart'` to read it again from its first child (then {@link WalkHooks.restarted}).
   */
  beforeStart(parent: PlannedParent<P, Plan>): Error | 'restart'
  /** The parent is read again from its first child (its children from then on may repeat earlier ones). */
  restarted(parent: PlannedParent<P, Plan>): void
  /** Each child page accepted, before its new children are yielded (a page read again may show where earlier ones moved). */
  page(parent: PlannedParent<P, Plan>, page: number, body: PageOf<C>): void
  /**
   * The parent's children will be read a second time once the page just accepted is yielded: they
   * may have grown while they were read (growth-watch.ts), so one may have slipped past unseen. What the
   * second pass finds comes after the rest of the parent's children.
   */
  rereading(parent: PlannedParent<P, Plan>): void
  /** Called before each child is yielded; `pass` is 2 for a child only the second pass found. */
  child(parent: PlannedParent<P, Plan>, child: C, page: number, index: number, pass: number): void
  /** The parent vanished (404 on its children) after `yielded` of its children were yielded. */
  vanished(parent: PlannedParent<P, Plan>, error: NotFoundError, yielded: number): void
  /** Every child of the parent the run will yield has been yielded (not called for a vanished parent). */
  done(parent: PlannedParent<P, Plan>): void
}

/**
 * Runs `run` to the end as the nested loop: each planned parent in list order, each of its child
 * pages as its scan reads them (list-scan.ts: the paging rules, shifts repaired), each new child in
 * order. Leaving the loop early (break, an exception, an abort) stops the run: what is in flight
 * is aborted and nothing more is sent. An error surfaces after every child before it.
 */
export async function* walk<P, C, Plan extends ChildPlan>(
  run: NestedRun<P, C, Plan>,
  reader: Pick<NestedReader<P, C>, 'childId' | 'childTime'>,
  hooks: WalkHooks<P, C, Plan>,
): AsyncGenerator<C, void, undefined> {
  try {
    for (;;) {
      const parent = await run.nextParent()
      if (parent === undefined) return
      let from = 0
      const growth = new GrowthWatch()
      let scan = childScan(parent.plan.firstPage)
      let yielded = 0
      let vanished = false
      function childScan(start: number): ListScan {
        return new ListScan({
          start,
          idOf: (child) => reader.childId(child as C),
          ticks: run.ticks,
          from: () => from,
          // A delete before the reader and an add at the end keep `total`: only the dates show it.
          rescan: () => growth.mayHaveGrown(),
          beforeStart: () => hooks.beforeStart(parent as PlannedParent<P, Plan>),
          unstable: (report) => run.unstableChildren(report),
        })
      }
      let starting = true
      for (;;) {
        const read = scan.next()
        if (read === undefined) break
        let fetched: FetchedPage<PageOf<C>>
        let sentAt: number
        if (read.held !== undefined) {
          fetched = read.held.fetched as FetchedPage<PageOf<C>>
          sentAt = read.held.sentAt
        } else {
          const result = await run.childPage(parent, read.page, read.fresh)
          if (result instanceof NotFoundError) {
            hooks.vanished(parent, result, yielded)
            vanished = true
            break
          }
          ;({ fetched, sentAt } = result)
        }
        growth.response(() => fetched.response.headers['date'], Date.now())
        const newest = fetched.body.data.at(-1)
        growth.page(newest === undefined ? undefined : reader.childTime(newest))
        if (starting) {
          starting = false
          const start = hooks.start(parent, read.page, fetched.body)
          if (start === 'restart' && read.page !== 1) {
            run.restart(parent)
            scan = childScan(1)
            starting = true
            continue
          }
          from = start === 'restart' ? 0 : start
        }
        const restarted = scan.restarted
        const pass = scan.pass
        const step = scan.accept(fetched, sentAt)
        if (scan.restarted && !restarted) {
          // A repair could not tell what moved before the first page read: read it again from the first.
          hooks.restarted(parent)
          run.restart(parent)
          continue
        }
        hooks.page(parent, read.page, fetched.body)
        if (scan.pass > pass) hooks.rereading(parent)
        for (const index of step.items) {
          // Stop at once when the caller aborts, not after the pages already fetched.
          const signal = hooks.signal
          if (signal?.aborted === true) throw new APIUserAbortError(hooks.abortMessage, { cause: signal.reason })
          const child = fetched.body.data[index] as C
          hooks.child(parent, child, read.page, index, pass)
          yielded++
          yield child
        }
      }
      if (!vanished) hooks.done(parent)
      run.leave(parent, scan.report)
    }
  } finally {
    run.stop()
  }
}
