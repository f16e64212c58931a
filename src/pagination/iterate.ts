import { SDK_CANCELLED } from '../internal/cancellation.ts'
import { ListScan, type FetchedPage, type ScanReport } from './list-scan.ts'

/** What a list call knows to read its pages (made by `listPages`, list.ts). @internal */
export interface PageSource<P> {
  /**
   * Fetches page `page` with the call's limit, filters and options, checked response by response
   * (rules 1–3 of rules.ts); `signal` cancels a prefetch.
   */
  fetch(page: number, signal?: AbortSignal): Promise<FetchedPage>
  /** The page a reader gets: made from `fetched`, holding only the items at `items` of its data (all when omitted). */
  page(fetched: FetchedPage, items?: readonly number[]): P
  /** The fetched response a page made by {@link PageSource.page} came from. */
  fetchedOf(page: P): FetchedPage
  /** How many later pages to keep in flight while iterating (0 = one at a time). */
  readonly prefetch: number
  /** Whether an iteration of the whole list scans it a second time (the `rescan` option). */
  readonly rescan: boolean
  /** The error thrown when the list will not hold still (UnstableListError). */
  unstable(report: ScanReport): Error
  /** Told once when an iteration that repaired shifts, or whose second scan found items, ends (it logs it). */
  repaired(report: ScanReport): void
}

/**
 * Yields the pages of a list from `first` on, each item of the list once, following the spec's
 * paging rule (read page p+1 only while p < `total_pages` of the latest response), the rules that
 * keep an iteration finite (rules.ts), and the scan that keeps it exact while the list moves
 * (list-scan.ts): a page that shows the list moved is repaired before its items are yielded, a
 * page read again to repair is yielded only when it brings items, and each page holds only items
 * not yielded before (so a page may hold fewer items than the service sent).
 *
 * With `prefetch` k > 0, before a page p is handed to the consumer, pages p+1..p+k are requested
 * (never past the latest `total_pages`), so they load while the consumer works on p. Pages still
 * come out in order, an error on page n surfaces when the consumer reaches page n, and leaving the
 * loop early aborts what is in flight. At most k pages are held besides the current one. A page
 * the scan wants read anew is fetched after the page before it (a prefetch may predate a shift).
 *
 * `made`: the page already made of `first` (the `PagePromise`'s), handed out again rather than
 * made twice when the iteration keeps all of it.
 * @internal
 */
export async function* iteratePages<P>(
  first: Promise<FetchedPage>,
  source: PageSource<P>,
  made?: Promise<P>,
): AsyncGenerator<P, void, undefined> {
  const controller = source.prefetch > 0 ? new AbortController() : undefined
  const inFlight = new Map<number, { readonly request: Promise<FetchedPage>; readonly sentAt: number }>()
  let scan: ListScan | undefined
  try {
    const head = await first
    const listing = new ListScan({
      start: head.body.pagination.page,
      rescan: source.rescan ? () => true : undefined,
      unstable: (report) => source.unstable(report),
    })
    scan = listing
    let unused: FetchedPage | undefined = head
    for (;;) {
      const read = listing.next()
      if (read === undefined) return
      let fetched: FetchedPage
      let sentAt: number
      if (read.held !== undefined) {
        ;({ fetched, sentAt } = read.held)
      } else if (unused !== undefined && !read.fresh) {
        fetched = unused
        sentAt = 0
      } else {
        const ahead = inFlight.get(read.page)
        inFlight.delete(read.page)
        if (ahead !== undefined && !read.fresh) {
          sentAt = ahead.sentAt
          fetched = await ahead.request
        } else {
          sentAt = listing.clock
          fetched = await source.fetch(read.page, controller?.signal)
        }
      }
      unused = undefined
      const step = listing.accept(fetched, sentAt)
      if (controller !== undefined) {
        // Before the page is handed over, the next k pages of the forward reading load.
        const next = listing.next()
        if (next !== undefined && !next.fresh && next.held === undefined) {
          const last = Math.min(fetched.body.pagination.total_pages, next.page + source.prefetch - 1)
          for (let page = next.page; page <= last; page++) {
            if (inFlight.has(page)) continue
            const request = source.fetch(page, controller.signal)
            request.catch(() => undefined) // surfaced when the consumer reaches this page
            inFlight.set(page, { request, sentAt: listing.clock })
          }
        }
      }
      if (!step.regular && step.items.length === 0) continue
      const whole = step.items.length === fetched.body.data.length
      yield made !== undefined && fetched === head && whole ? await made : source.page(fetched, whole ? undefined : step.items)
    }
  } finally {
    controller?.abort(SDK_CANCELLED)
    inFlight.clear()
    const report = scan?.report
    if (report !== undefined && (report.shifts > 0 || report.recovered > 0)) source.repaired(report)
  }
}

/** Flattens pages into their items, in order. @internal */
export async function* iterateItems<T>(pages: AsyncIterable<{ readonly data: readonly unknown[] }>): AsyncGenerator<T, void, undefined> {
  for await (const page of pages) {
    for (const item of page.data) yield item as T
  }
}
