/**
 * The service's own deprecation notice on a response: a `Deprecation` header (RFC 9745: a
 * structured-field date, `@1688169599`, seconds since the epoch, possibly in the future) and/or a
 * `Sunset` header (RFC 8594: an HTTP date after which the resource may stop answering), with
 * `Link`s of relation `deprecation` and `sunset` saying where to read more. A team on a pinned SDK
 * learns from its own logs that `/rest/v1` (or one operation of it) is going away, without
 * upgrading first.
 *
 * Each response that carries either header: the call's trace gets `deprecation`
 * (`RequestTrace.deprecation`, every time), and the first one of each operation in the process is
 * logged at `warn` through the client's logger (warn-once.ts), redacted, naming the operation, the
 * dates and the links. The spec says nothing of either header: the SDK reads them as the RFCs
 * define them, keeps a value it cannot read as sent, and never fails a call over them.
 */
import type { RequestTrace } from '../core/tracing.ts'
import type { ReceivedResponse } from './exchange.ts'
import type { Redactor } from './redact.ts'
import type { SdkLogger } from './sdk-logger.ts'
import { warnOncePerProcess } from './warn-once.ts'

type Notice = NonNullable<RequestTrace['deprecation']>
type NoticeLink = Notice['links'][number]

/** The request a response answered, as the log names it. */
interface Answered {
  readonly operation: string
  readonly method: string
  readonly path: string
}

/**
 * Reads a response's notice (if any): sets it on `trace` and logs it once per operation per process.
 * The response's headers are as received: a response without either header costs two lookups; one
 * with a notice has its headers scrubbed by `redactor` before the trace or the log shows them.
 */
export function noticeDeprecation(
  request: Answered,
  response: Pick<ReceivedResponse, 'headers'>,
  redactor: Redactor,
  log: SdkLogger,
  trace: RequestTrace | undefined,
): void {
  if (response.headers['deprecation'] === undefined && response.headers['sunset'] === undefined) return
  const headers = redactor.redactHeaders(response.headers)
  const deprecation = headers['deprecation']
  const sunset = headers['sunset']
  const notice: Notice = {
    deprecatedAt: deprecation === undefined ? undefined : deprecationDate(deprecation),
    sunsetAt: sunset === undefined ? undefined : httpDate(sunset),
    headers: { deprecation, sunset },
    links: links(headers['link']),
  }
  if (trace !== undefined) trace.deprecation = notice
  if (!log.enabled('warn')) return
  const path = request.path.split('?')[0] ?? request.path
  let marked = `the service marks ${request.operation} (${request.method} ${path}) as deprecated`
  if (notice.deprecatedAt !== undefined) {
    marked += `${notice.deprecatedAt.getTime() > Date.now() ? ' from' : ' since'} ${notice.deprecatedAt.toISOString()}`
  } else if (deprecation !== undefined) {
    marked += ` (Deprecation: ${deprecation})`
  }
  const parts = [marked]
  if (notice.sunsetAt !== undefined) parts.push(`it may stop answering after ${notice.sunsetAt.toISOString()} (Sunset)`)
  else if (sunset !== undefined) parts.push(`Sunset: ${sunset}`)
  if (notice.links.length > 0) parts.push(`see ${notice.links.map((link) => `${link.href} (${link.rel})`).join(', ')}`)
  warnOncePerProcess(
    log,
    `service-deprecation:${request.operation}`,
    `${parts.join('; ')}. Said once per operation per process; an SDK release that moves off it will say so in its CHANGELOG.`,
    {
      operation: request.operation,
      method: request.method,
      path,
      deprecation: notice.deprecatedAt?.toISOString() ?? deprecation,
      sunset: notice.sunsetAt?.toISOString() ?? sunset,
      links: notice.links,
      requestId: headers['x-request-id'],
    },
  )
}

/**
 * RFC 9745's `@<seconds>`; also an HTTP date, which drafts of it used. `undefined` for anything
 * else (such as the drafts' `true`): deprecated, no date given.
 */
function deprecationDate(value: string): Date | undefined {
  const seconds = /^@(-?\d{1,15})$/.exec(value.trim())?.[1]
  if (seconds !== undefined) return new Date(Number(seconds) * 1000)
  return httpDate(value)
}

/** An HTTP date (IMF-fixdate, or RFC 850 and asctime, which HTTP still accepts): it starts with the day's name. */
function httpDate(value: string): Date | undefined {
  const text = value.trim()
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /.test(text)) return undefined
  const time = Date.parse(text)
  return Number.isNaN(time) ? undefined : new Date(time)
}

/** The `deprecation` and `sunset` targets of a `Link` header (RFC 8288): `<uri>; rel="sunset", <uri>; rel=deprecation`. */
function links(header: string | undefined): NoticeLink[] {
  if (header === undefined) return []
  const found: NoticeLink[] = []
  // One link-value: <target>, then its parameters up to the next comma outside quotes and <>.
  for (const match of header.matchAll(/<([^>]*)>((?:[^,"]|"(?:[^"\\]|\\.)*")*)/g)) {
    const href = match[1] ?? ''
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] ?? '')
    const relations = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/)
    for (const relation of relations) {
      if (relation === 'deprecation' || relation === 'sunset') found.push({ rel: relation, href })
    }
  }
  return found
}
