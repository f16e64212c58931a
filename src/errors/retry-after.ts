/**
 * What a response says about trying again, read the same way by the errors (`retryable`,
 * `APIError.retryAfterMs`) and by the retry policy (`src/internal/retry-policy.ts`).
 */

/** Statuses retried automatically: 408, 429, 500, 502, 503, 504 (frozen). */
export const RETRYABLE_STATUSES: readonly number[] = Object.freeze([408, 429, 500, 502, 503, 504])

/**
 * An HTTP date (RFC 9110, 5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`, and the two obsolete forms,
 * `Sunday, 06-Nov-94 08:49:37 GMT` and `Sun Nov  6 08:49:37 1994` (asctime, GMT though it does not
 * say so). Day names and months in English, a time of day, and GMT: nothing `Date.parse` would read
 * loosely (`Fri, 5`), or in this machine's zone.
 */
const HTTP_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*, [0-9A-Za-z -]+ \d{2}:\d{2}:\d{2} GMT$/
const ASCTIME = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/

/** The time (ms since the epoch) of an HTTP date, `undefined` when `value` is not one. */
export function httpDate(value: string): number | undefined {
  const text = value.trim()
  const time = HTTP_DATE.test(text) ? Date.parse(text) : ASCTIME.test(text) ? Date.parse(`${text} GMT`) : Number.NaN
  return Number.isNaN(time) ? undefined : time
}
/** A day name alone: the first part of an HTTP date that a comma split off (`Sun` of `Sun, 06 Nov ...`). */
const DAY_NAME = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*$/
/** Delay-seconds (RFC 9110, 10.2.3), and the fractional seconds some servers send. */
const SECONDS = /^\d+(\.\d+)?$/

/**
 * The wait the server asked for, in ms, from `retry-after-ms` (milliseconds, may be fractional) or
 * `Retry-After` (seconds, whole or not, or an HTTP date); `undefined` when neither is present or
 * readable (then the SDK's own backoff applies).
 *
 * - A header sent more than once arrives as one value joined with `, ` (the commas inside HTTP
 *   dates are told apart): the longest readable wait counts, since each is a floor.
 * - An HTTP date is counted from the response's own `Date` header (the server's clock, RFC 9110,
 *   6.6.1) when it has a readable one, else from `now`: a server clock ahead of or behind this
 *   machine's does not lengthen or cancel the wait.
 */
export function serverRequestedDelay(headers: Readonly<Record<string, string>>, now: number = Date.now()): number | undefined {
  const ms = longest(headers['retry-after-ms'], (value) => (SECONDS.test(value) ? Math.ceil(Number(value)) : undefined))
  if (ms !== undefined) return ms
  const after = headers['retry-after']
  if (after === undefined) return undefined
  const served = headers['date'] === undefined ? undefined : httpDate(headers['date'])
  const reference = served ?? now
  return longest(after, (value) => {
    if (SECONDS.test(value)) return Math.ceil(Number(value) * 1000)
    const date = httpDate(value)
    return date === undefined ? undefined : Math.max(0, date - reference)
  })
}

/** The largest of `read` over the values of a header that may have been sent more than once (`undefined`: none readable). */
function longest(header: string | undefined, read: (value: string) => number | undefined): number | undefined {
  if (header === undefined) return undefined
  let most: number | undefined
  const parts = header.split(',')
  for (let i = 0; i < parts.length; i++) {
    let value = (parts[i] as string).trim()
    // `Sun, 06 Nov 1994 08:49:37 GMT` was split after its day name: put it back together.
    if (DAY_NAME.test(value) && i + 1 < parts.length) value = `${value},${parts[++i] as string}`
    const wait = read(value)
    if (wait !== undefined && (most === undefined || wait > most)) most = wait
  }
  return most
}
