/**
 * Whether a conversation's messages may have grown while they were read, which is when one pass
 * over them cannot be trusted: a message deleted before the reader's position moves the next one
 * back onto the page already read, and a message added at the end in the meantime keeps `total`,
 * so no two pages disagree and nothing shows the slip (docs/paging.md, "Lists that move").
 *
 * The spec orders messages oldest first (Endpoint 6), so a message added during the read is the
 * newest, dated at or after the read began. The read's start is the service's clock: the `Date`
 * header of its first response (RFC 9110 §6.6.1), else this process's clock then. Times that
 * cannot be read count as "may have grown": a second pass costs requests, a slip costs a message.
 */

import { httpDate } from '../errors/retry-after.ts'

/**
 * How far before the read's start (ms) a newest message may be dated and still count as added
 * during the read: room for the service's clocks (its `Date` header, with whole seconds, and the
 * clock that dates messages) to disagree. A conversation whose newest message is this recent gets
 * a second pass, whether it grew during the read or just before.
 */
export const ADDED_SLACK_MS = 60_000

/**
 * Watches one read of a conversation's messages for signs that it grew meanwhile: told when the
 * read began (its first response) and the newest message of each page read, it answers
 * {@link GrowthWatch.mayHaveGrown} when the pass ends.
 */
export class GrowthWatch {
  /** When the read began (ms since the epoch); `undefined` before its first response. */
  #began: number | undefined
  /** The latest `created_at` seen (ms since the epoch). */
  #newest = Number.NEGATIVE_INFINITY
  /** Whether a page's newest message had a `created_at` that cannot be read. */
  #unreadable = false

  /**
   * A response of the read arrived: the first one sets when it began, from its `Date` header (an
   * HTTP date) when readable, else from `now` (ms since the epoch). `dateHeader` is asked of the
   * first only (a response's headers are scrubbed of secrets when first read).
   */
  response(dateHeader: () => string | undefined, now: number): void {
    if (this.#began !== undefined) return
    const header = dateHeader()
    this.#began = (header === undefined ? undefined : httpDate(header)) ?? now
  }

  /** A page was read: `createdAt` is its newest (last) message's, `undefined` for an empty page. */
  page(createdAt: string | undefined): void {
    if (createdAt === undefined) return
    const created = isoTime(createdAt)
    if (Number.isNaN(created)) this.#unreadable = true
    else if (created > this.#newest) this.#newest = created
  }

  /**
   * Whether messages may have been added while they were read: the newest message seen is dated
   * within {@link ADDED_SLACK_MS} of the read's start or later, or a page's newest could not be read.
   */
  mayHaveGrown(): boolean {
    return this.#unreadable || this.#newest >= (this.#began ?? Number.POSITIVE_INFINITY) - ADDED_SLACK_MS
  }
}

/** An ISO 8601 date-time written without a zone, which `Date.parse` would read in this machine's zone. */
const ZONELESS = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/

/**
 * The time (ms since the epoch) of an ISO 8601 `created_at`, NaN when it is not one. A date-time
 * without a zone is read as UTC, as a service's own timestamps are: read in this machine's zone,
 * the trigger would move by hours with the `TZ` it runs under.
 */
function isoTime(value: string): number {
  return Date.parse(ZONELESS.test(value) ? `${value}Z` : value)
}
