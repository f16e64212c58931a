import type { APIResponse } from '../core/response.ts'
import { ChatServiceError } from '../errors/errors.ts'
import type { Pagination } from '../schemas/common.ts'
import { iterateItems, iteratePages, type PageSource } from './iterate.ts'
import type { FetchedPage } from './list-scan.ts'
import { hasNextPage } from './rules.ts'

/**
 * Makes a {@link Page} of a list whose later pages `source` fetches (internal: the constructor is
 * protected, so that its internal parameter types stay out of the public types; see src/internal/README.md).
 */
export let createPage: <T>(
  body: { readonly data: T[]; readonly pagination: Pagination },
  response: APIResponse,
  context: { readonly source: PageSource<Page<T>> },
) => Page<T>

/** Gives a page made by a subclass's own factory (`MessagePage`) the source of its later pages. */
export let bindPageSource: <P extends Page<unknown>>(page: P, source: PageSource<P>) => P

/**
 * What a listing's source made `page` from, kept on the page (set with {@link setMadeFrom}; read
 * back by the source's `fetchedOf`): a field of the page, not a WeakMap per listing, which cost a
 * map and an ephemeron-table entry on every list call (issue 32).
 */
export let madeFromOf: (page: Page<unknown>) => FetchedPage | undefined

/** Records what `page` was made from (see {@link madeFromOf}). */
export let setMadeFrom: (page: Page<unknown>, fetched: FetchedPage) => void

/**
 * One page of a list operation (spec, Endpoints 2, 4–6): its `data`, the service's `pagination`
 * block, and the `response` it came from. Iterating a page with `for await` yields its items and
 * then those of every later page, following the spec's paging rule (read page p+1 only while
 * `p < total_pages` of the latest response).
 */
export class Page<T> implements AsyncIterable<T> {
  /** The items of this page, in the service's order. */
  readonly data: T[]
  /** `{ page, limit, total, total_pages }` as the service sent it. */
  readonly pagination: Pagination
  /** Status, headers and request id of the response this page came from. */
  readonly response: APIResponse
  // Set by the factories above, right after construction.
  #source!: PageSource<Page<T>>
  /** What the listing's source made this page from, when it made it (see {@link madeFromOf}). */
  #madeFrom: FetchedPage | undefined = undefined

  static {
    createPage = (body, response, { source }) => bindPageSource(new Page(body, response), source)
    madeFromOf = (page) => page.#madeFrom
    setMadeFrom = (page, fetched) => {
      page.#madeFrom = fetched
    }
    bindPageSource = (page, source) => {
      page.#source = source
      return page
    }
  }

  /** Pages are made by list methods. */
  protected constructor(body: { readonly data: T[]; readonly pagination: Pagination }, response: APIResponse) {
    this.data = body.data
    this.pagination = body.pagination
    this.response = response
  }

  /** Whether the service has a page after this one: `pagination.page < pagination.total_pages`. */
  hasNextPage(): boolean {
    return hasNextPage(this.pagination)
  }

  /**
   * Fetches the next page with the same `limit`, filters and options.
   * @throws ChatServiceError when there is no next page (check {@link Page.hasNextPage} first), and
   * whatever the request throws (APIError, APIConnectionError, ...).
   */
  getNextPage(): Promise<this> {
    if (!this.hasNextPage()) {
      return Promise.reject(
        new ChatServiceError(
          `There is no page after page ${this.pagination.page} of ${this.pagination.total_pages}; check hasNextPage() first`,
        ),
      )
    }
    const source = this.#source
    return source.fetch(this.pagination.page + 1).then((fetched) => source.page(fetched) as this)
  }

  /**
   * This page and every later page, one at a time (or prefetched, per the list call's `prefetch`),
   * each item of the list once even while it moves (README, "Paging"): a page may then hold fewer
   * items than the service sent, and a page read again to repair a shift comes only with items.
   */
  pages(): AsyncGenerator<this, void, undefined> {
    const source = this.#source
    return iteratePages(Promise.resolve(source.fetchedOf(this)), source, Promise.resolve(this)) as AsyncGenerator<this, void, undefined>
  }

  /** Every item of this page and of every later page, each once. */
  [Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    return iterateItems<T>(this.pages())
  }
}
