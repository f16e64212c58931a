import type { WithResponse } from '../core/response.ts'
import type { Page } from './page.ts'
import { iterateItems, iteratePages, type PageSource } from './iterate.ts'

/**
 * Makes a {@link PagePromise} whose first page is `first` and whose later pages `source` fetches
 * (internal: the constructor is private; see src/internal/README.md).
 */
export let createPagePromise: <T, P extends Page<T>>(first: Promise<P>, source: PageSource<P>) => PagePromise<T, P>

/**
 * What a list method returns. The first page's request is already under way.
 * - `await` it for the first {@link Page} (one request);
 * - `for await (const item of it)` for every item of every page;
 * - `for await (const page of it.pages())` for page after page.
 *
 * Iteration follows the spec's paging rule (read page p+1 only while `p < total_pages` of the latest
 * response) and starts at the `page` you gave. Errors are those of the request: APIError subclasses,
 * APIConnectionError, APIUserAbortError, RequestValidationError (bad params; nothing was sent) and
 * ResponseValidationError.
 */
export class PagePromise<T, P extends Page<T> = Page<T>> implements PromiseLike<P>, AsyncIterable<T> {
  readonly #first: Promise<P>
  readonly #source: PageSource<P>

  static {
    createPagePromise = (first, source) => new PagePromise(first, source)
  }

  /** Made by list methods only. */
  private constructor(first: Promise<P>, source: PageSource<P>) {
    // The request starts before anyone awaits it. Marking the promise handled keeps a failure
    // from crashing the process (unhandled rejection) while the caller is still busy elsewhere;
    // the error still reaches every `await`, `then` and `for await` on this PagePromise.
    first.catch(() => undefined)
    this.#first = first
    this.#source = source
  }

  /** Resolves with `{ data: firstPage, response }`: the first {@link Page} and the response it came from (also `page.response`). */
  withResponse(): Promise<WithResponse<P>> {
    return this.#first.then((page) => ({ data: page, response: page.response }))
  }

  /** Resolves with the first {@link Page}; rejects with the request's error. */
  then<R1 = P, R2 = never>(
    onfulfilled?: ((page: P) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#first.then(onfulfilled, onrejected)
  }

  /** Handles a failure of the first page's request. */
  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<P | R> {
    return this.#first.catch(onrejected)
  }

  /** Runs `onfinally` once the first page's request has settled. */
  finally(onfinally?: (() => void) | null): Promise<P> {
    return this.#first.finally(onfinally)
  }

  /** Every page from the first, in order. */
  pages(): AsyncGenerator<P, void, undefined> {
    return iteratePages(this.#first, this.#source)
  }

  /** Every item of every page, in order. */
  [Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    return iterateItems<T>(this.pages())
  }

  /** `'PagePromise'`, for `Object.prototype.toString` and `util.inspect`. */
  get [Symbol.toStringTag](): string {
    return 'PagePromise'
  }
}
