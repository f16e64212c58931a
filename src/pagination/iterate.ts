import { SDK_CANCELLED } from '../internal/cancellation.ts'
import type { ValidationIssue } from '../errors/errors.ts'
import { hasNextPage, PageSequence } from './rules.ts'

/** What a list call knows to fetch more pages. @internal */
export interface PageSource<P> {
  /** Fetches page `page` with the call's limit, filters and options; `signal` cancels a prefetch. */
  fetch(page: number, signal?: AbortSignal): Promise<P>
  /** How many later pages to keep in flight while iterating (0 = one at a time). */
  readonly prefetch: number
  /** The error that reports `issues` found in `page` (a page this source made): see `PreparedList.invalid`. */
  invalid(page: P, issues: readonly ValidationIssue[]): Error
  /**
   * The page as the service sent it, for the paging rules (rules.ts): a page may hold fewer items
   * than were sent (typed metadata's `onInvalidMetadata: 'skip'`). Default: the page itself.
   */
  asSent?(page: P): PageLike
}

interface PageLike {
  readonly data: readonly unknown[]
  readonly pagination: { readonly page: number; readonly limit: number; readonly total: number; readonly total_pages: number }
}

/**
 * Yields `first`, then each later page while the paging rule allows it (rules.ts: the latest page
 * says `page < total_pages`, and no page breaks the rules that keep an iteration finite; one
 * that does throws when the consumer reaches it).
 * With `prefetch` k > 0, before a page p is handed to the consumer, pages p+1..p+k are requested
 * (never past the latest `total_pages`), so they load while the consumer works on p. Pages still
 * come out in order, an error on page n surfaces when the consumer reaches page n, and leaving the
 * loop early aborts what is in flight. At most k pages are held besides the current one.
 * @internal
 */
export async function* iteratePages<P extends PageLike>(first: Promise<P>, source: PageSource<P>): AsyncGenerator<P, void, undefined> {
  const controller = source.prefetch > 0 ? new AbortController() : undefined
  const inFlight = new Map<number, Promise<P>>()
  const sequence = new PageSequence()
  const checked = (page: P): P => {
    const issues = sequence.check(source.asSent?.(page) ?? page)
    if (issues.length > 0) throw source.invalid(page, issues)
    return page
  }
  try {
    let current = checked(await first)
    let nextToLaunch = current.pagination.page + 1
    for (;;) {
      if (controller !== undefined) {
        const lastWanted = Math.min(current.pagination.total_pages, current.pagination.page + source.prefetch)
        for (nextToLaunch = Math.max(nextToLaunch, current.pagination.page + 1); nextToLaunch <= lastWanted; nextToLaunch++) {
          const request = source.fetch(nextToLaunch, controller.signal)
          request.catch(() => undefined) // surfaced when the consumer reaches this page
          inFlight.set(nextToLaunch, request)
        }
      }
      yield current
      if (!hasNextPage(current.pagination)) return
      const wanted = current.pagination.page + 1
      const request = inFlight.get(wanted) ?? source.fetch(wanted, controller?.signal)
      inFlight.delete(wanted)
      current = checked(await request)
    }
  } finally {
    controller?.abort(SDK_CANCELLED)
    inFlight.clear()
  }
}

/** Flattens pages into their items, in order. @internal */
export async function* iterateItems<T>(pages: AsyncIterable<{ readonly data: readonly unknown[] }>): AsyncGenerator<T, void, undefined> {
  for await (const page of pages) {
    for (const item of page.data) yield item as T
  }
}
