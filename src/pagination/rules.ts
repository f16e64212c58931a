/**
 * The paging rule, and the checks that keep every iteration finite whatever the service claims,
 * in one place for every way the SDK walks pages (`for await`, `.pages()`, prefetch, `listAll`,
 * `listNew`, the conversation scan).
 *
 * The spec's rule (Paging rule): read page p+1 only while p < `total_pages` of the latest response.
 * Trusting that alone lets a broken or hostile service page a client forever (a `total_pages`
 * that grows with every page, says 1e12 while `total` is 40, empty pages, the same items again).
 * So every page must also be consistent with itself and with the pages before it:
 *
 * 1. `page` is the page asked for.
 * 2. `total_pages` is `ceil(total / limit)` (for an empty list, 0 or 1).
 * 3. Where the SDK computes positions from page numbers (`listAll`'s cursor, `listNew`'s
 *    checkpoint), `limit` is the limit asked for and `data` holds at most that many items. A plain
 *    listing follows whatever page size the service uses, so it does not ask this.
 * 4. A page before the last (`page < total_pages`) is not empty.
 * 5. Of two pages in a row, at least one brings an id the page before it did not hold (while
 *    `total` held: one such page alone may be the list moving, as many records inserted before as
 *    deleted after; a change of `total` is a shift, repaired by list-scan.ts).
 * 6. No page beyond `2 × T + 10`, where T is the `total_pages` of the first page read: a list may
 *    grow while it is read, not without bound.
 *
 * 1–3 are checked on each response as it arrives, 4–6 by the listing's scan (list-scan.ts) in the
 * order it reads pages. A page that breaks one ends the iteration with a ResponseValidationError
 * that says what the service claimed.
 */
import type { ValidationIssue } from '../errors/errors.ts'
import type { Pagination } from '../schemas/common.ts'

/** A page as the rules read it. */
export interface PageLike {
  readonly data: readonly unknown[]
  readonly pagination: Pagination
}

/** How much a list may grow while it is read: pages beyond `GROWTH_FACTOR × T + GROWTH_SLACK` are refused (rule 6). */
export const GROWTH_FACTOR = 2
/** See {@link GROWTH_FACTOR}. */
export const GROWTH_SLACK = 10

function issue(path: (string | number)[], message: string): ValidationIssue {
  return { path, code: 'custom', message }
}

/**
 * Rules 1–3: what one response says about itself and the request. `positions`: the page size
 * position arithmetic relies on (rule 3), or `undefined` for a plain listing.
 */
export function pageIssues(body: PageLike, asked: { readonly page: number; readonly positions?: number | undefined }): ValidationIssue[] {
  const { page, limit, total, total_pages: totalPages } = body.pagination
  const issues: ValidationIssue[] = []
  if (page !== asked.page) issues.push(issue(['pagination', 'page'], `Asked for page ${asked.page}, the service answered page ${page}`))
  const positions = asked.positions
  if (positions !== undefined && limit !== positions) {
    issues.push(issue(['pagination', 'limit'], `Asked for ${positions} items a page, the service answered limit ${limit}`))
  }
  const expected = Math.ceil(total / limit)
  if (totalPages !== expected && !(total === 0 && totalPages === 1)) {
    issues.push(
      issue(
        ['pagination', 'total_pages'],
        `total_pages is ${totalPages}, but ${total} items at ${limit} a page make ${expected} pages: the pagination block contradicts itself`,
      ),
    )
  }
  if (positions !== undefined && body.data.length > positions) {
    issues.push(issue(['data'], `The page holds ${body.data.length} items, more than its limit of ${positions}`))
  }
  return issues
}

/** Rule 6: the highest page a listing whose first page said `totalPages` may read. */
export function maxPageOf(totalPages: number): number {
  return GROWTH_FACTOR * totalPages + GROWTH_SLACK
}

/**
 * Rules 4 and 6 for one page of a listing whose first page said `firstTotalPages`: it is not an
 * empty page before the last, and not beyond {@link maxPageOf}.
 */
export function sequenceIssues(body: PageLike, firstTotalPages: number): ValidationIssue[] {
  const { page, total_pages: totalPages } = body.pagination
  const issues: ValidationIssue[] = []
  if (page > maxPageOf(firstTotalPages)) {
    issues.push(
      issue(
        ['pagination', 'total_pages'],
        `The service still claims more pages on page ${page} (total_pages ${totalPages}) after claiming ${firstTotalPages} on the first page read: ` +
          `the list cannot have grown that much while it was read, so the iteration stops here`,
      ),
    )
  }
  if (body.data.length === 0 && page < totalPages) {
    issues.push(issue(['data'], `Page ${page} of ${totalPages} is empty: only the last page may be`))
  }
  return issues
}

/** Rule 5: page `page` holds only items of page `previous`, while the list did not move between them. */
export function repeatIssue(page: number, previous: number): ValidationIssue {
  return issue(
    ['data'],
    `Page ${page} holds only items already on page ${previous}: the service repeats itself, so the iteration stops here`,
  )
}

/** The spec's paging rule: whether the page after `pagination` is to be read. */
export function hasNextPage(pagination: Pick<Pagination, 'page' | 'total_pages'>): boolean {
  return pagination.page < pagination.total_pages
}
