/**
 * Reading a whole paged list exactly once while it moves: the one mechanism behind every listing
 * of a whole list (`for await` over a list method, `.pages()`, prefetch, `findByExternalId`,
 * `listAll`'s and `listNew`'s conversation scan, and the messages of each conversation they read).
 *
 * Page-number paging shows window `[(p - 1) × limit, p × limit)` of the list as it is when page p
 * is read. An item deleted before the reader's position moves every later item one place up, so
 * the first item of the next page slips onto the page already read and is never seen; an item
 * inserted before it moves them down, so an item comes twice. The spec does not show the list's
 * order; this module assumes only that items keep their order relative to each other (they are
 * inserted and deleted, not moved), and sees the list through what every page carries: `total`
 * and the items' ids.
 *
 * How it stays exact:
 *
 * - **Every item once.** Items are yielded by id, once per listing: an id listed before is never
 *   yielded again (a `Map` of every id listed, about 60 bytes per item with ids of 14 characters;
 *   BENCHMARKS.md has the measured figure).
 * - **A shift is seen** where two consecutive pages disagree on `total`: something was inserted or
 *   deleted between the two reads. (A delete before the reader and an insert after it keep `total`
 *   and cannot be seen from one pass: see the second scan below.)
 * - **A shift is repaired** before the later page's items are yielded. If the later page holds an
 *   item already listed in this pass, it starts at or before the reader's position: nothing can
 *   have slipped past, and its new items are yielded. Otherwise the pages before it are read again,
 *   newest first (the previous page, then further back, jumping by the change in `total` when one
 *   page is not enough), until one holds an item already listed in this pass (or is page 1): that
 *   window starts at or before the reader's position, so reading on from it sees every item that
 *   slipped past. A page fetched before the page it follows answered (prefetch) that disagrees with
 *   it is simply fetched again.
 * - **Only new items** of a page are yielded: those after the first item already listed in this
 *   pass, and not listed before. An unlisted item before that one lies before where the listing
 *   started, was inserted during the run, or slipped back past the reader unseen (a move that kept
 *   `total`): in the first pass it is not taken as listed, so the second scan yields it if it is
 *   still there.
 * - **Bounded.** Repairs may read at most `10 + 2 × T` pages again per pass (T: `total_pages` of
 *   the pass's first page), and at most 12 in a row without the reading getting further; a list
 *   that moves more than that throws the listing's "will not hold still" error.
 * - **The second scan** (`rescan`): a second pass over the list that yields what the first did not
 *   list, for the changes the first cannot see (a delete and an insert that keep `total`, an item
 *   that moves). `listAll` always makes it; `listNew` when the first pass saw the list move or left
 *   checkpoint entries unlisted; plain iteration when asked (`{ rescan: true }`); a conversation's
 *   messages when they may have grown while they were read (growth-watch.ts). Never after a first
 *   pass that read one page once: that page was a snapshot of the whole list.
 *
 * The scan decides and counts; it does no I/O. Its driver asks {@link ListScan.next} which page to
 * read (and whether a response fetched earlier, a prefetch, may serve), fetches it, and hands it to
 * {@link ListScan.accept}, which says which of its items to yield.
 */
import type { APIResponse } from '../core/response.ts'
import type { ResponseValidationError, ValidationIssue } from '../errors/errors.ts'
import { hasNextPage, repeatIssue, sequenceIssues, type PageLike } from './rules.ts'

/**
 * One page as a listing fetched it: the body as the service sent it (checked response by response:
 * rules 1–3 of rules.ts), the response it came from, and the error that reports what is wrong
 * with it.
 */
export interface FetchedPage<B extends PageLike = PageLike> {
  readonly body: B
  readonly response: APIResponse
  /** The ResponseValidationError reporting `issues` in this page (its response and body kept, secrets scrubbed). */
  invalid(issues: readonly ValidationIssue[]): ResponseValidationError
}

/** Which page to read next. */
export interface ScanRead {
  readonly page: number
  /**
   * `true`: a request made now (a repair, or the page read again); `false`: a response fetched
   * earlier (a prefetch) may serve.
   */
  readonly fresh: boolean
  /** A response the scan kept and will take again: hand it back to `accept` instead of fetching. */
  readonly held?: HeldPage | undefined
}

/** A page response kept by the scan for later use. */
export interface HeldPage {
  readonly fetched: FetchedPage
  /** {@link ListScan.clock} when its request was made. */
  readonly sentAt: number
}

/** What a page gives the listing once accepted. */
export interface ScanStep {
  /** Indexes into the page's `data` of the items to yield, in order. */
  readonly items: readonly number[]
  /**
   * Whether the page is one of the list's pages as a reader expects them: its first reading in the
   * first pass. Reads that repair a shift, and the second scan's, are not (a page-by-page reader is
   * shown them only when they bring items).
   */
  readonly regular: boolean
}

/** What repairs a listing made; see {@link ListScan.report}. */
export interface ScanReport {
  /** Passes over the list: 1, or 2 after a second scan. */
  readonly scans: number
  /** Times two consecutive pages showed the list had moved between them (their `total` differed). */
  readonly shifts: number
  /** Requests made to repair them (pages read again); the second scan's pages are not counted here. */
  readonly rereads: number
  /** Items the repairs and the second scan yielded that a plain reading would have missed. */
  readonly recovered: number
  /** Items that came again (shifted down by an insert, or read again by a repair) and were not yielded twice. */
  readonly repeated: number
}

/** How a listing reads its list; see {@link ListScan}. */
export interface ListScanOptions {
  /** Page to start at (the `page` parameter; default 1). */
  readonly start?: number | undefined
  /** The id of an item, or `undefined` when it has none (then it cannot be de-duplicated, and is never dropped). */
  readonly idOf?: ((item: unknown) => string | undefined) | undefined
  /**
   * Index on the start page's first reading from which to yield (resuming after an item); the
   * items before it count as listed. Default 0.
   */
  readonly from?: ((page: PageLike) => number) | undefined
  /** Whether to make a second scan once the first ends; called with what the first saw. Default: never. */
  readonly rescan?: ((first: ScanReport & { readonly moved: boolean }) => boolean) | undefined
  /**
   * The error to throw when a repair would have to read before the start page (a listing that
   * started past page 1 cannot tell the items before its start from those that slipped past),
   * or `'restart'` to read the list again from page 1 (as a new listing: `listNew` then reads a
   * conversation again from its first message). Only asked when `start > 1`.
   */
  readonly beforeStart?: (() => Error | 'restart') | undefined
  /** The error to throw when repairs exceed their budget (the list will not hold still). */
  readonly unstable: (report: ScanReport) => Error
  /**
   * The clock `sentAt` and {@link ListScan.clock} read, advanced by every page accepted: shared by
   * the scans of one run (whose requests are launched ahead by one scheduler). Default: its own.
   */
  readonly ticks?: { value: number } | undefined
}

/** Pages one pass may read again to repair shifts: `REPAIR_SLACK + 2 × T` (T: `total_pages` of its first page). */
export const REPAIR_SLACK = 10
/** Pages read again in a row without the reading getting past the furthest page it had reached: more, and the list will not hold still. */
export const MAX_STALLED_REREADS = 12

const defaultIdOf = (item: unknown): string | undefined => {
  const id = item !== null && typeof item === 'object' ? (item as { id?: unknown }).id : undefined
  return typeof id === 'string' ? id : undefined
}

/** The last page a forward reading consumed: what the next one must agree with. */
interface Consumed {
  readonly page: number
  readonly total: number
  readonly limit: number
  /** {@link ListScan.clock} when it was accepted. */
  readonly at: number
  /** Position in the list of its last item when it was read (the reader's position). */
  readonly position: number
  /** The ids it held (rule 5); `undefined` when an item had none. */
  readonly ids: ReadonlySet<string> | undefined
  /** Whether it held only items of the page before it (rule 5). */
  readonly repeat: boolean
}

/** One listing's scan of a paged list; see the module comment. */
export class ListScan {
  readonly #options: ListScanOptions
  readonly #idOf: (item: unknown) => string | undefined
  #start: number
  /** Every id listed, and the pass that listed it last. */
  readonly #listed = new Map<string, number>()
  #pass = 1
  readonly #ticks: { value: number }
  #previous: Consumed | undefined
  /** Next page of the forward reading. */
  #next: number
  /** Highest page consumed in this pass: pages up to it are read again only to repair. */
  #highest = 0
  /** Highest page taken in this pass (consumed, or held and since dropped): a response for it fetched earlier is spent. */
  #taken = 0
  /** Walking back to repair a shift: the page to read. */
  #probe: number | undefined
  /** The page that showed a shift, kept until the forward reading comes back to it. */
  #held: { readonly page: number; readonly held: HeldPage } | undefined
  /** The forward reading's next page must be fetched anew (a prefetch disagreed). */
  #refetch = false
  #done = false
  #restarted = false
  /** Whether the first page of the pass has been consumed (the start page's `from` applies to it). */
  #begun = false
  #budget = Number.POSITIVE_INFINITY
  /** Pages read again since the reading last got past its furthest page. */
  #stalled = 0
  /** `total_pages` of the first page read (rule 6). */
  #firstTotalPages: number | undefined
  /** Whether this pass saw the list move (a shift, an item again, a count that does not add up). */
  #moved = false
  #listedThisPass = 0
  #lastTotal = 0
  #shifts = 0
  #rereads = 0
  #passRereads = 0
  #recovered = 0
  #repeated = 0

  constructor(options: ListScanOptions) {
    this.#options = options
    this.#idOf = options.idOf ?? defaultIdOf
    this.#start = options.start ?? 1
    this.#next = this.#start
    this.#ticks = options.ticks ?? { value: 0 }
  }

  /** Counts accepted pages: a response is newer than a page when its request was made at or after that page's `clock`. */
  get clock(): number {
    return this.#ticks.value
  }

  /** Highest page of the list read in this pass so far (0 before any): later ones are not read yet. */
  get highest(): number {
    return this.#highest
  }

  /** Whether an item with this id was listed (in any pass, or passed over before the start). */
  has(id: string): boolean {
    return this.#listed.has(id)
  }

  /** Whether the scan has ended (every pass read to its last page). */
  get done(): boolean {
    return this.#done
  }

  /** The pass under way: 1, or 2 during the second scan. */
  get pass(): number {
    return this.#pass
  }

  /** Whether the listing was restarted from page 1 (see `beforeStart`). */
  get restarted(): boolean {
    return this.#restarted
  }

  /** What the scan has done so far. */
  get report(): ScanReport {
    return {
      scans: this.#pass,
      shifts: this.#shifts,
      rereads: this.#rereads,
      recovered: this.#recovered,
      repeated: this.#repeated,
    }
  }

  /** The page to read next, or `undefined` once the scan is done. */
  next(): ScanRead | undefined {
    if (this.#done) return undefined
    if (this.#probe !== undefined) return { page: this.#probe, fresh: true }
    const held = this.#held
    if (held !== undefined && held.page === this.#next) return { page: this.#next, fresh: false, held: held.held }
    return { page: this.#next, fresh: this.#refetch || this.#next <= Math.max(this.#highest, this.#taken) }
  }

  /**
   * Takes the page {@link ListScan.next} asked for.
   * @param sentAt - {@link ListScan.clock} when its request was made.
   * @returns the items to yield (none for a read that only located the reader).
   * @throws the page's `invalid` error for a page that breaks rules 4–6 (rules.ts); the `unstable`
   * error when repairs exceed their budget; the `beforeStart` error.
   */
  accept(fetched: FetchedPage, sentAt: number): ScanStep {
    this.#ticks.value++
    const { body } = fetched
    const page = body.pagination.page
    this.#taken = Math.max(this.#taken, page)
    this.#firstTotalPages ??= body.pagination.total_pages
    const issues = sequenceIssues(body, this.#firstTotalPages)
    if (issues.length > 0) throw fetched.invalid(issues)
    if (this.#held?.page === page) this.#held = undefined
    if (this.#probe !== undefined) return this.#acceptProbe(fetched)
    const repair = this.#refetch || page <= this.#highest
    if (repair) this.#countReread()
    this.#refetch = false
    const previous = this.#previous
    if (previous !== undefined && body.pagination.total !== previous.total) {
      this.#moved = true
      if (sentAt < previous.at) {
        // Fetched before the page it follows answered (a prefetch): fetch it again, after.
        this.#refetch = true
        return NOTHING
      }
      this.#shifts++
      if (!this.#holdsListed(body)) {
        // Nothing of this page was listed: items may have slipped past. Walk back from the page before.
        this.#held = { page, held: { fetched, sentAt } }
        this.#probe = Math.max(this.#start, page - 1)
        return NOTHING
      }
    } else if (!repair && previous?.page === page - 1 && within(idsOf(body, this.#idOf), previous.ids)) {
      // Only items of the page before, while `total` held (rule 5): once, the list may have moved
      // (as many inserted before as deleted after; a short last page needs only a few): nothing of
      // it is new, and nothing can have slipped past. Twice in a row, the service repeats itself.
      if (previous.repeat) throw fetched.invalid([repeatIssue(page, previous.page)])
      this.#moved = true
      this.#shifts++
      return this.#consume(fetched, repair, true)
    }
    return this.#consume(fetched, repair)
  }

  #acceptProbe(fetched: FetchedPage): ScanStep {
    this.#countReread()
    const { body } = fetched
    const page = body.pagination.page
    if (this.#holdsListed(body) || (page === 1 && this.#start === 1)) {
      // This window starts at or before the reader's position: read on from it.
      this.#probe = undefined
      this.#previous = undefined
      return this.#consume(fetched, true)
    }
    if (page <= this.#start) {
      const outcome = this.#options.beforeStart?.() ?? this.#options.unstable(this.report)
      if (outcome !== 'restart') throw outcome
      this.#restart()
      return NOTHING
    }
    // Not back far enough: at least one more page, further when `total` fell by more than a page.
    const drop = (this.#previous?.total ?? body.pagination.total) - body.pagination.total
    const limit = Math.max(1, body.pagination.limit)
    const position = (this.#previous?.position ?? 0) - drop
    this.#probe = Math.max(this.#start, Math.min(page - 1, Math.floor(Math.max(0, position) / limit) + 1))
    return NOTHING
  }

  /** Reads the list again from page 1 as a new listing (ids listed so far are forgotten). */
  #restart(): void {
    this.#restarted = true
    this.#listed.clear()
    this.#start = 1
    this.#next = 1
    this.#highest = 0
    this.#taken = 0
    this.#probe = undefined
    this.#held = undefined
    this.#previous = undefined
    this.#refetch = false
    this.#begun = true
    this.#listedThisPass = 0
  }

  #countReread(): void {
    this.#rereads++
    this.#passRereads++
    this.#stalled++
    if (this.#passRereads > this.#budget || this.#stalled > MAX_STALLED_REREADS) throw this.#options.unstable(this.report)
  }

  /** Whether the page holds an item listed in this pass. */
  #holdsListed(body: PageLike): boolean {
    for (const item of body.data) {
      const id = this.#idOf(item)
      if (id !== undefined && this.#listed.get(id) === this.#pass) return true
    }
    return false
  }

  /** Index of the first item of the page whose listing `matches`, or -1. */
  #firstListed(body: PageLike, matches: (listed: number | undefined) => boolean): number {
    for (let index = 0; index < body.data.length; index++) {
      const id = this.#idOf(body.data[index])
      if (id !== undefined && matches(this.#listed.get(id))) return index
    }
    return -1
  }

  /** Yields the page's new items, and moves the forward reading on from it. */
  #consume(fetched: FetchedPage, repair: boolean, repeat = false): ScanStep {
    const { body } = fetched
    const { page, total, total_pages: totalPages, limit } = body.pagination
    const pass = this.#pass
    const items: number[] = []
    let from = 0
    let first = -1
    /** Whether the items before `first` lie before the listing's start (else: before the reader's position). */
    let beforeStart = false
    if (!this.#begun) {
      this.#begun = true
      this.#budget = REPAIR_SLACK + 2 * totalPages
      if (pass === 1) from = Math.max(0, this.#options.from?.(body) ?? 0)
      // The second scan of a listing that started past page 1: what its first page holds before the
      // first item the first pass listed lies before that start (already read by whoever read up to it).
      else if (this.#start > 1) {
        first = this.#firstListed(body, (listed) => listed !== undefined)
        beforeStart = first !== -1
      }
    }
    if (first === -1) first = this.#firstListed(body, (listed) => listed === pass)
    for (let index = 0; index < body.data.length; index++) {
      const id = this.#idOf(body.data[index])
      const before = id === undefined ? undefined : this.#listed.get(id)
      if (before === pass) {
        this.#repeated++
        this.#moved = true
        continue
      }
      // An item never listed that stands before the first one this pass listed: inserted during the
      // run, or one that slipped back past the reader unseen, in a move that kept `total`. It is not
      // yielded here (this window starts before the reader's position). In the first pass it is not
      // taken as listed either, so that the second scan still yields it if it stays (taking it as
      // listed lost it); in the last, it is: there is no later scan to yield it, and a listing
      // takes what it did not list for gone (listNew's deleted conversations).
      if (index < first && !beforeStart && before === undefined && pass === 1) continue
      if (id !== undefined) {
        this.#listed.set(id, pass)
        this.#listedThisPass++
      }
      if (index < from || index < first || before !== undefined) continue
      if (repair || pass > 1) this.#recovered++
      items.push(index)
    }
    const regular = pass === 1 && !repair && page > this.#highest
    const ids = idsOf(body, this.#idOf)
    if (page > this.#highest) this.#stalled = 0
    this.#previous = { page, total, limit, ids, repeat, at: this.#ticks.value, position: (page - 1) * limit + body.data.length - 1 }
    this.#highest = Math.max(this.#highest, page)
    this.#next = page + 1
    this.#lastTotal = total
    if (!hasNextPage(body.pagination)) this.#endPass()
    return { items, regular }
  }

  #endPass(): void {
    // A count that does not add up (fewer ids listed than the list holds) means the list moved.
    if (this.#listedThisPass !== this.#lastTotal) this.#moved = true
    // One page read once is a snapshot of the whole list: nothing can have moved past it.
    const snapshot = this.#highest === this.#start && this.#rereads === 0
    const rescan = this.#pass === 1 && !snapshot && this.#options.rescan?.({ ...this.report, moved: this.#moved }) === true
    if (!rescan) {
      this.#done = true
      return
    }
    this.#pass++
    this.#next = this.#start
    this.#highest = 0
    this.#taken = 0
    this.#previous = undefined
    this.#held = undefined
    this.#refetch = false
    this.#passRereads = 0
    this.#listedThisPass = 0
    this.#moved = false
    this.#begun = false
    this.#stalled = 0
  }
}

const NOTHING: ScanStep = { items: [], regular: false }

/** The ids of a page's items; `undefined` when an item has none (such a page is never taken for a repeat). */
function idsOf(body: PageLike, idOf: (item: unknown) => string | undefined): ReadonlySet<string> | undefined {
  const ids = new Set<string>()
  for (const item of body.data) {
    const id = idOf(item)
    if (id === undefined) return undefined
    ids.add(id)
  }
  return ids
}

/** Whether the ids of a non-empty page `a` are all on page `b`. */
function within(a: ReadonlySet<string> | undefined, b: ReadonlySet<string> | undefined): boolean {
  if (a === undefined || b === undefined || a.size === 0) return false
  for (const id of a) if (!b.has(id)) return false
  return true
}
