/**
 * The scheduler behind `listAll` and `listNew`: reads a list of parents (conversations) page by
 * page, asks for each parent, once, in list order, whether and from where to read its children
 * (messages), and fetches those child pages with up to `concurrency` requests in flight for the
 * whole run, in bounded memory, for a consumer that takes them in exactly the order of the nested
 * loop. One engine, so that concurrency, read-ahead, early exit, abort and error order behave the
 * same in every iteration built on it.
 *
 * How it schedules: the pages the consumer will need are known, in order, as far as the responses
 * so far tell (a parent's later pages once one of its pages has told `total_pages`; a parent's
 * first page as soon as the parent is listed and planned). Whenever a request settles or the
 * consumer takes a page, requests are launched while fewer than `concurrency` are in flight, in
 * this order: the parent page the consumer waits for; the child page the consumer waits for; the
 * next parent page while none is in flight (so the scan keeps moving and `total` gets known early);
 * the earliest needed child pages within `2 × concurrency` pages of the consumer and while fewer
 * than `4 × concurrency` are fetched and not consumed; then further parent pages, up to 100 pages
 * (10,000 parents) ahead of the consumer, so that a scan where few parents need reading (`listNew`
 * on a quiet night) uses the whole concurrency. A huge parent at the head gets all the
 * parallelism, nothing runs far ahead of the consumer, and parents that need no reading cost no
 * memory.
 *
 * Parent pages are processed strictly in page order whatever order they arrive in: the paging
 * rules (rules.ts) are checked in order, a parent listed twice is planned once (first listing
 * wins), and an error on a parent page surfaces after every child before it.
 */
import { APIUserAbortError, NotFoundError, type ValidationIssue } from '../errors/errors.ts'
import { SDK_CANCELLED } from '../internal/cancellation.ts'
import { hasNextPage, PageSequence, type PageLike } from './rules.ts'

/** A page as the engine gets it from its source: checked response by response already, and able to report itself. */
export interface SourcePage<T> extends PageLike {
  readonly data: readonly T[]
  /** The error that reports issues found in this page (a ResponseValidationError keeping the page's response, secrets scrubbed). */
  invalid(issues: readonly ValidationIssue[]): Error
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
}

/** What a run reads from. Its requests carry the caller's own signal; the `signal` given here is the run's, aborted when it stops. */
export interface NestedSource<P, C, Plan extends ChildPlan = ChildPlan> {
  /** Page `page` (at {@link PARENT_PAGE_SIZE} a page) of the parents, in the service's order. */
  parents(page: number, signal: AbortSignal): Promise<SourcePage<P>>
  /** Page `page` of one parent's children. */
  children(parent: P, page: number, signal: AbortSignal): Promise<SourcePage<C>>
  parentId(parent: P): string
  /**
   * How to read `parent` (listed at `index`), or `undefined` not to read it. Asked once per parent,
   * in list order, for its first listing only. `resumed` marks the parent the run starts at when it
   * starts at a parent id (see {@link RunStart.resume}).
   */
  plan(parent: P, index: number, resumed: boolean): Plan | undefined
}

/** Where a run starts in the parent list. */
export interface RunStart {
  /** Index (0-based) of the first parent to plan; parents before it are passed over. */
  readonly index: number
  /**
   * Start at the parent with this id instead, looked for on the page that holds `index` (it may
   * have moved within that page); `stale(what)` is thrown when it is not there.
   */
  readonly resume?: { readonly parentId: string; readonly stale: (what: string) => Error } | undefined
}

/** What a run's scan of the parent list saw; set once the last parent page has been processed. */
export interface ScanReport {
  /** Distinct parent ids listed by this run's pages. */
  readonly listed: number
  /** `pagination.total` of the last parent page. */
  readonly total: number
  /** Whether `total` went down from one page to a later one (something was deleted while the list was read). */
  readonly shrank: boolean
}

/** Parents are read 100 to a page, the most the service allows. */
export const PARENT_PAGE_SIZE = 100
/** Parent pages read ahead of the one being consumed (10,000 parents). */
const PARENT_LOOKAHEAD_PAGES = 100

/** One request of the run: made when first needed, launched when the limits allow, then settled. */
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

interface ParentState<P, C, Plan extends ChildPlan> extends PlannedParent<P, Plan> {
  /** Its first child page the consumer needs (the plan's, or 1 after a restart). */
  firstPage: number
  /** Next child page to launch. */
  nextPage: number
  /** `total_pages` of its latest child page to arrive; `undefined` before the first. */
  totalPages: number | undefined
  pages: Map<number, Slot<SourcePage<C>>>
}

/** The parent page (1-based) that lists the parent at `index`. */
export function parentPageOf(index: number): number {
  return Math.floor(index / PARENT_PAGE_SIZE) + 1
}

/**
 * One pass over the parent list and the children it plans: what is launched, what has arrived,
 * what the consumer took. The consumer calls {@link NestedRun.nextParent}, then
 * {@link NestedRun.childPage} for each page it reads, then {@link NestedRun.leave}; and
 * {@link NestedRun.stop} when it is done, early or not.
 */
export class NestedRun<P, C, Plan extends ChildPlan = ChildPlan> {
  readonly #source: NestedSource<P, C, Plan>
  readonly #concurrency: number
  readonly #window: number
  readonly #cap: number
  readonly #abort = new AbortController()
  readonly #signal: AbortSignal
  readonly #start: RunStart
  /** Parent ids planned or passed over by this run (and by earlier passes, when given). */
  readonly #seen: Set<string>
  /** Parent ids listed by this run's pages. */
  readonly #listed = new Set<string>()

  readonly #parentPages = new Map<number, Slot<SourcePage<P>>>()
  readonly #parentSequence = new PageSequence()
  #nextParentPage: number
  #parentPagesInFlight = 0
  /** Last parent page processed (in page order); one less than the start page before any. */
  #processedPage: number
  /** `total_pages` of the last parent page processed. */
  #parentTotalPages: number | undefined
  #shrank = false
  #lastTotal = 0
  /** The error of the parent page the scan stopped at, surfaced once the consumer gets there. */
  #scanError: unknown
  #scanDone = false
  /** Whether the consumer waits for the next parent page. */
  #awaitingParents = false

  /** Planned parents in list order; the consumer is at `#head`. */
  #planned: (ParentState<P, C, Plan> | undefined)[] = []
  #head = 0
  readonly #byIndex = new Map<number, ParentState<P, C, Plan>>()
  /** The child page of the head parent the consumer is on, waits for, or will ask for first (0 while there is no head). */
  #currentPage = 0
  #inFlight = 0
  /** Child pages launched and not yet consumed or dropped. */
  #held = 0
  /** Children the plans expect, from the start on. */
  #expected = 0
  #stopped = false

  constructor(source: NestedSource<P, C, Plan>, options: { concurrency: number; start: RunStart; seen?: Set<string> | undefined }) {
    this.#source = source
    this.#concurrency = options.concurrency
    this.#window = 2 * options.concurrency
    this.#cap = 4 * options.concurrency
    // The source's requests carry the caller's signal already; this one is the run's own.
    this.#signal = this.#abort.signal
    this.#start = options.start
    this.#seen = options.seen ?? new Set()
    this.#nextParentPage = parentPageOf(options.start.index)
    this.#processedPage = this.#nextParentPage - 1
  }

  /** Children the plans expect in all, once the whole parent list has been read; `undefined` until then. */
  get expected(): number | undefined {
    return this.#scanDone ? this.#expected : undefined
  }

  /** What the scan of the parent list saw, once it is complete; `undefined` until then (and after a scan error). */
  get scan(): ScanReport | undefined {
    if (!this.#scanDone) return undefined
    return { listed: this.#listed.size, total: this.#lastTotal, shrank: this.#shrank }
  }

  /** Changes the children expected (a parent skipped, or read again from its start). */
  adjustExpected(delta: number): void {
    this.#expected += delta
  }

  /**
   * The next parent to read, in list order, once the parent page that lists it has been processed;
   * `undefined` at the end of the list.
   * @throws the error of a parent page (a failed request, a page that breaks the paging rules),
   * after every parent before it; the `resume.stale` error when the start parent is not on its page.
   */
  async nextParent(): Promise<PlannedParent<P, Plan> | undefined> {
    for (;;) {
      const state = this.#planned[this.#head]
      if (state !== undefined) {
        this.#pump()
        return state
      }
      if (this.#scanError !== undefined) throw this.#scanError as Error
      if (this.#scanDone) return undefined
      const page = this.#processedPage + 1
      const slot = this.#parentSlot(page)
      this.#awaitingParents = true
      this.#pump()
      await slot.settled
      this.#awaitingParents = false
      this.#processParentPages()
    }
  }

  /** Child page `page` of the current parent, once it arrives; a NotFoundError when the parent vanished (404). */
  async childPage(parent: PlannedParent<P, Plan>, page: number): Promise<SourcePage<C> | NotFoundError> {
    const state = this.#byIndex.get(parent.index) as ParentState<P, C, Plan>
    this.#currentPage = page
    const slot = state.pages.get(page) ?? this.#childSlot(state, page)
    this.#pump()
    await slot.settled
    state.pages.delete(page)
    if (slot.launched) this.#held--
    this.#pump()
    if (slot.error instanceof NotFoundError) return slot.error
    if (slot.error !== undefined) throw slot.error as Error
    return slot.value as SourcePage<C>
  }

  /** Forgets what was fetched of the current parent beyond page 1 and reads it again from page 1 (its next {@link NestedRun.childPage} asks for page 1). */
  restart(parent: PlannedParent<P, Plan>): void {
    const state = this.#byIndex.get(parent.index) as ParentState<P, C, Plan>
    this.#drop(state)
    state.firstPage = 1
    state.nextPage = 1
    state.totalPages = undefined
    this.#currentPage = 1
    this.#pump()
  }

  /** The consumer is done with the current parent: drop whatever of it was fetched ahead. */
  leave(parent: PlannedParent<P, Plan>): void {
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

  /** Processes the parent pages that have arrived, in page order, up to the first one missing or failed. */
  #processParentPages(): void {
    for (;;) {
      if (this.#scanDone || this.#scanError !== undefined) return
      const page = this.#processedPage + 1
      const slot = this.#parentPages.get(page)
      if (slot === undefined || !slot.launched || (slot.value === undefined && slot.error === undefined)) return
      this.#parentPages.delete(page)
      if (slot.error !== undefined) {
        this.#scanError = slot.error
        return
      }
      try {
        this.#processParentPage(page, slot.value as SourcePage<P>)
      } catch (error) {
        this.#scanError = error
        return
      }
    }
  }

  #processParentPage(page: number, result: SourcePage<P>): void {
    const issues = this.#parentSequence.check(result)
    if (issues.length > 0) throw result.invalid(issues)
    const { total, total_pages: totalPages } = result.pagination
    if (total < this.#lastTotal) this.#shrank = true
    this.#lastTotal = total
    this.#parentTotalPages = totalPages
    this.#processedPage = page
    const first = (page - 1) * PARENT_PAGE_SIZE
    let startOffset = 0
    let resumedOffset = -1
    if (page === parentPageOf(this.#start.index)) {
      const resume = this.#start.resume
      if (resume === undefined) startOffset = this.#start.index - first
      else {
        resumedOffset = result.data.findIndex((parent) => this.#source.parentId(parent) === resume.parentId)
        if (resumedOffset === -1)
          throw resume.stale(`conversation ${resume.parentId} is no longer on page ${page} of the conversation list`)
        startOffset = resumedOffset
      }
    }
    result.data.forEach((parent, offset) => {
      const id = this.#source.parentId(parent)
      this.#listed.add(id)
      if (offset < startOffset || this.#seen.has(id)) {
        this.#seen.add(id)
        return
      }
      this.#seen.add(id)
      const index = first + offset
      const plan = this.#source.plan(parent, index, offset === resumedOffset)
      if (plan === undefined) return
      const state: ParentState<P, C, Plan> = {
        index,
        parent,
        plan,
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
    })
    if (!hasNextPage(result.pagination)) this.#scanDone = true
  }

  /** Launches the earliest needed requests while fewer than `concurrency` are in flight. */
  #pump(): void {
    while (!this.#stopped && this.#inFlight < this.#concurrency && this.#launchNext()) {
      // each pass launched one request
    }
  }

  /** Launches one request, if one is due, in the order given at the top of this file. */
  #launchNext(): boolean {
    const current = this.#planned[this.#head]
    if (current === undefined) {
      if (this.#awaitingParents && this.#launchParentPage(this.#processedPage + 1)) return true
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
   * Launches parent page `page` when the scan may read it: not launched yet, within the latest
   * `total_pages` processed, within the look-ahead, and not past a page that failed.
   */
  #launchParentPage(page: number): boolean {
    if (this.#scanDone || this.#scanError !== undefined) return false
    const slot = this.#parentSlot(page)
    if (slot.launched) return false
    const known = this.#parentTotalPages
    if (known !== undefined && page > Math.max(known, this.#processedPage + 1)) return false
    // Before the first page has told `total_pages`, only the start page is read.
    if (known === undefined && page > this.#processedPage + 1) return false
    const consumerPage = this.#planned[this.#head]?.index
    const from = consumerPage === undefined ? this.#processedPage : parentPageOf(consumerPage)
    if (page > from + PARENT_LOOKAHEAD_PAGES) return false
    this.#nextParentPage = Math.max(this.#nextParentPage, page + 1)
    this.#parentPagesInFlight++
    this.#launch(slot, this.#source.parents(page, this.#signal), () => {
      this.#parentPagesInFlight--
      this.#processParentPages()
    })
    return true
  }

  #launchChildPage(state: ParentState<P, C, Plan>, page: number): true {
    state.nextPage = page + 1
    this.#held++
    const slot = this.#childSlot(state, page)
    const pages = state.pages
    this.#launch(slot, this.#source.children(state.parent, page, this.#signal), () => {
      // A page of a restarted parent's earlier reading tells nothing about the new one.
      if (slot.value !== undefined && state.pages === pages) state.totalPages = slot.value.pagination.total_pages
    })
    return true
  }

  #parentSlot(page: number): Slot<SourcePage<P>> {
    let slot = this.#parentPages.get(page)
    if (slot === undefined) this.#parentPages.set(page, (slot = newSlot()))
    return slot
  }

  #childSlot(state: ParentState<P, C, Plan>, page: number): Slot<SourcePage<C>> {
    let slot = state.pages.get(page)
    if (slot === undefined) state.pages.set(page, (slot = newSlot()))
    return slot
  }

  /** Counts a request in flight until it settles, keeps its outcome, and launches more. */
  #launch<T>(slot: Slot<T>, request: Promise<T>, onSettled: () => void): void {
    slot.launched = true
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
        onSettled()
        slot.resolve()
        this.#pump()
      })
  }
}

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
  start(parent: PlannedParent<P, Plan>, page: number, result: SourcePage<C>): number | 'restart'
  /** Called before each child is yielded. */
  child(parent: PlannedParent<P, Plan>, child: C, page: number, index: number): void
  /** The parent vanished (404 on its children) after `yielded` of its children were yielded. */
  vanished(parent: PlannedParent<P, Plan>, error: NotFoundError, yielded: number): void
  /** Every child of the parent the run will yield has been yielded (not called for a vanished parent). */
  done(parent: PlannedParent<P, Plan>): void
}

/**
 * Runs `run` to the end as the nested loop: each planned parent in list order, each of its child
 * pages in order following the paging rules (rules.ts), each child in order. Leaving the loop
 * early (break, an exception, an abort) stops the run: what is in flight is aborted and nothing
 * more is sent. An error surfaces after every child before it.
 */
export async function* walk<P, C, Plan extends ChildPlan>(
  run: NestedRun<P, C, Plan>,
  hooks: WalkHooks<P, C, Plan>,
): AsyncGenerator<C, void, undefined> {
  try {
    for (;;) {
      const parent = await run.nextParent()
      if (parent === undefined) return
      let page = parent.plan.firstPage
      let starting = true
      let sequence = new PageSequence()
      let yielded = 0
      let vanished = false
      for (;;) {
        const result = await run.childPage(parent, page)
        if (result instanceof NotFoundError) {
          hooks.vanished(parent, result, yielded)
          vanished = true
          break
        }
        const issues = sequence.check(result)
        if (issues.length > 0) throw result.invalid(issues)
        let from = 0
        if (starting) {
          starting = false
          const start = hooks.start(parent, page, result)
          if (start === 'restart' && page !== 1) {
            run.restart(parent)
            page = 1
            sequence = new PageSequence()
            continue
          }
          from = start === 'restart' ? 0 : start
        }
        for (let index = from; index < result.data.length; index++) {
          // Stop at once when the caller aborts, not after the pages already fetched.
          const signal = hooks.signal
          if (signal?.aborted === true) throw new APIUserAbortError(hooks.abortMessage, { cause: signal.reason })
          const child = result.data[index] as C
          hooks.child(parent, child, page, index)
          yielded++
          yield child
        }
        // The spec's paging rule: read page p+1 only while p < total_pages of the latest response.
        if (!hasNextPage(result.pagination)) break
        page++
      }
      if (!vanished) hooks.done(parent)
      run.leave(parent)
    }
  } finally {
    run.stop()
  }
}
