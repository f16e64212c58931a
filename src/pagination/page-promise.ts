import type { APIResponse } from '../core/response.ts'
import type { Page } from './page.ts'
import { iterateItems, iteratePages, type PageSource } from './iterate.ts'
import type { FetchedPage } from './list-scan.ts'

/**
 * Makes a {@link PagePromise} whose first page is made of `first` and whose later pages `source`
 * fetches (internal: the constructor is private; see src/internal/README.md).
 */
export let createPagePromise: <T, P extends Page<T>>(first: Promise<FetchedPage>, source: PageSource<P>) => PagePromise<T, P>

/**
 * What a list method returns: a `Promise` of the first page (the request is already under way) that
 * also iterates every item.
 * - `await` it for the first {@link Page} (one request);
 * - `for await (const item of it)` for every item of every page;
 * - `for await (const page of it.pages())` for page after page.
 *
 * Iteration follows the spec's paging rule (read page p+1 only while `p < total_pages` of the latest
 * response), starts at the `page` you gave, and yields each item once even while the list moves
 * (README, "Paging"). Errors are those of the request: APIError subclasses, APIConnectionError,
 * APIUserAbortError, RequestValidationError (bad params; nothing was sent) and
 * ResponseValidationError; while iterating, UnstableListError for a list that will not hold still.
 *
 * It is a real `Promise` (`instanceof Promise`): a first page that fails while nothing handles it
 * (no `await`, `then`, `catch`, iteration or `withResponse()`) is an `unhandledRejection`, as for any
 * promise. Pages the SDK fetches ahead on its own (`prefetch`) never are: their errors surface when
 * the iteration reaches them, or not at all if it ends first. `then`, `catch` and `finally` return
 * plain Promises.
 */
export class PagePromise<T, P extends Page<T> = Page<T>> extends Promise<P> implements AsyncIterable<T> {
  /** The first page's response; `undefined` for a PagePromise made by a static `Promise` method. */
  readonly #first: Promise<FetchedPage> | undefined
  readonly #source: PageSource<P> | undefined

  static {
    createPagePromise = <T, P extends Page<T>>(first: Promise<FetchedPage>, source: PageSource<P>) => new PagePromise<T, P>(first, source)
    // `then`, `catch` and `finally` make plain Promises: only list methods make a PagePromise. A value, not a
    // getter: `then` reads it on every call (and `await` on every call of the caller's), and a getter
    // is a function call each time (issue 32).
    Reflect.defineProperty(PagePromise, Symbol.species, { value: Promise, configurable: true })
  }

  /** Made by list methods only (and, with an executor, by the static methods `Promise` subclasses inherit). */
  private constructor(first: Promise<FetchedPage> | Executor<P>, source?: PageSource<P>) {
    let settle: { resolve: (value: P) => void; reject: (reason?: unknown) => void } | undefined
    super(
      typeof first === 'function' || source === undefined
        ? (first as Executor<P>)
        : (resolve, reject) => {
            settle = { resolve, reject }
          },
    )
    this.#first = typeof first === 'function' ? undefined : first
    this.#source = source
    if (settle === undefined || typeof first === 'function' || source === undefined) return
    // The first page is made straight into this promise: no promise in between (issue 32: each
    // one is a reaction job and a `then` lookup per call).
    const { resolve, reject } = settle
    first.then((fetched) => {
      try {
        resolve(source.page(fetched))
      } catch (error) {
        reject(error)
      }
    }, reject)
  }

  /** Resolves with `{ data: firstPage, response }`: the first {@link Page} and the response it came from (also `page.response`). */
  withResponse(): Promise<{ readonly data: P; readonly response: APIResponse }> {
    return this.#handledPage().then((page) => ({ data: page, response: page.response }))
  }

  /** Every page from the first, in order; each item of the list once, even while it moves (see {@link Page.pages}). */
  pages(): AsyncGenerator<P, void, undefined> {
    const page = this.#handledPage()
    // Made by `PagePromise.resolve(page)`: no source of more pages.
    if (this.#source === undefined || this.#first === undefined) return onlyPage(page)
    return iteratePages(this.#first, this.#source, page)
  }

  /** Every item of every page, in order, each once. */
  [Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    return iterateItems<T>(this.pages())
  }

  /** `'PagePromise'`, for `Object.prototype.toString` and `util.inspect`. */
  override get [Symbol.toStringTag](): string {
    return 'PagePromise'
  }

  /**
   * The first page, for a caller who will handle its failure there (an iteration, `withResponse()`):
   * this promise itself then need not be handled too.
   */
  #handledPage(): Promise<P> {
    this.then(undefined, ignore)
    return this
  }
}

/** The executor of `new Promise(executor)`. */
type Executor<T> = (resolve: (value: T | PromiseLike<T>) => void, reject: (reason?: unknown) => void) => void

async function* onlyPage<P>(page: Promise<P>): AsyncGenerator<P, void, undefined> {
  yield await page
}

function ignore(): void {
  // A rejection handled elsewhere.
}
