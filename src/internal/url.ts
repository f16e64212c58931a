import type { ValidationIssue } from '../errors/errors.ts'

/** The version prefix every operation lives under (spec, Versioning). */
export const API_PREFIX = '/rest/v1'

/** A base URL split into the parts requests are built from. */
export interface ResolvedBaseUrl {
  /** `protocol://host[:port]`, e.g. `https://chat.example.com`. */
  readonly origin: string
  /** Path every request starts with: any path the caller gave, then exactly one `/rest/v1`. */
  readonly prefix: string
  /** Whether the host is a loopback address (`localhost`, `127.0.0.0/8`, `::1`). */
  readonly loopback: boolean
  /** `origin + prefix`, the form shown to users. */
  readonly href: string
}

/**
 * Reads a base URL given as an origin, or ending in `/rest/v1`, with or without a trailing slash,
 * as a string or a `URL`, and returns the parts that put exactly one `/rest/v1` in front of every
 * path. Scheme and host are case-insensitive (RFC 9110, 4.2.3; WHATWG URL lower-cases them); the
 * `/rest/v1` prefix is matched case-insensitively too, because the service has no other prefix
 * that differs only by case, and written in lower case. Returns issues instead when the URL is
 * unusable: not http(s), carries credentials, a query or a fragment, ends in the doubled
 * `/rest/v1/v1` prefix of the service's sample code, names another API version (`/rest/v2`: this
 * SDK speaks v1 only), ends in `/rest` without the version (requests would go to `/rest/rest/v1`),
 * or has `/rest/v1` followed by more path (`https://h/rest/v1/agents`).
 */
export function resolveBaseUrl(input: string | URL): ResolvedBaseUrl | ValidationIssue[] {
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return [{ path: ['baseUrl'], code: 'invalid_format', message: 'Expected an absolute http(s) URL such as https://chat.example.com' }]
  }
  const issues: ValidationIssue[] = []
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    issues.push({ path: ['baseUrl'], code: 'invalid_format', message: `Expected an http: or https: URL, received ${url.protocol}` })
  }
  if (url.username !== '' || url.password !== '') {
    issues.push({
      path: ['baseUrl'],
      code: 'invalid_format',
      message: 'The URL must not carry a user name or password; pass keyId and keySecret instead',
    })
  }
  if (url.search !== '' || url.hash !== '') {
    issues.push({ path: ['baseUrl'], code: 'invalid_format', message: 'The URL must not have a query string or fragment' })
  }
  // An origin alone (`https://h`, `https://h/`: the usual form) has no path to normalize or refuse,
  // and skips the path's regular expressions: each is compiled on its first use, a cost of every
  // process's first client (about 3 M instructions, most of them for the case-insensitive ones; issue 32).
  let path = ''
  if (url.pathname !== '/') path = checkPath(url.pathname, issues)
  if (path.endsWith(API_PREFIX)) path = path.slice(0, -API_PREFIX.length)
  if (`${path}/`.includes(`${API_PREFIX}/`) && issues.length === 0) {
    issues.push({
      path: ['baseUrl'],
      code: 'invalid_format',
      message: 'The URL has /rest/v1 followed by more path; give the origin, or a URL that ends in /rest/v1',
    })
  }
  if (issues.length > 0) return issues
  const prefix = `${path}${API_PREFIX}`
  return { origin: url.origin, prefix, loopback: isLoopback(url.hostname), href: `${url.origin}${prefix}` }
}

/** `resolveBaseUrl`'s reading of a path other than `/`: normalized, with the issues it has added to `issues`. */
function checkPath(pathname: string, issues: ValidationIssue[]): string {
  // Repeated slashes collapse (`https://h//rest/v1` is `https://h/rest/v1`); `/REST/V1` is `/rest/v1`.
  const path = pathname
    .replace(/\/{2,}/g, '/')
    .replace(/\/+$/, '')
    .replace(/\/rest\/v1(?=\/|$)/gi, API_PREFIX)
  const decoded = safeDecode(path)
  if (decoded === undefined) {
    issues.push({ path: ['baseUrl'], code: 'invalid_format', message: 'The URL path is not valid percent-encoding' })
  } else if (decoded !== path && /\/rest\/v\d/i.test(decoded)) {
    issues.push({ path: ['baseUrl'], code: 'invalid_format', message: 'Write /rest/v1 in the URL without percent-encoding' })
  }
  const otherVersion = /\/rest\/(v(?!1(?:\/|$))\d+)(?:\/|$)/i.exec(path)
  if (otherVersion !== null) {
    issues.push({
      path: ['baseUrl'],
      code: 'invalid_format',
      message: `The URL names API version ${otherVersion[1] ?? ''}; this SDK speaks version v1 of the service (/rest/v1): give the origin, or a URL that ends in /rest/v1`,
    })
  }
  if (path.endsWith(`${API_PREFIX}/v1`)) {
    issues.push({
      path: ['baseUrl'],
      code: 'invalid_format',
      message: 'The URL ends in /rest/v1/v1, the doubled prefix of the sample code; the service lives under a single /rest/v1',
    })
  }
  if (/\/rest$/i.test(path)) {
    issues.push({
      path: ['baseUrl'],
      code: 'invalid_format',
      message: `The URL ends in /rest: requests would go to ${path}/rest/v1/... and find nothing; give the origin, or a URL that ends in /rest/v1`,
    })
  }
  return path
}

function safeDecode(path: string): string | undefined {
  try {
    return decodeURIComponent(path)
  } catch {
    return undefined
  }
}

function isLoopback(hostname: string): boolean {
  // Without regular expressions where a string test says as much (see resolveBaseUrl): the brackets
  // of an IPv6 host dropped, and the IPv4 pattern tried only on a host that could match it.
  let host = hostname.toLowerCase()
  if (host.startsWith('[')) host = host.slice(1)
  if (host.endsWith(']')) host = host.slice(0, -1)
  return (
    host === 'localhost' || host.endsWith('.localhost') || host === '::1' || (host.startsWith('127.') && /^127(\.\d{1,3}){3}$/.test(host))
  )
}

/**
 * Percent-encodes one path segment, so that an id such as `../agents`, `a/b` or `a?b` stays one
 * segment and cannot change the path or add a query. The ids `.` and `..` never get here: no
 * encoding keeps them ids (URL parsers read `%2E%2E` as `..`), so `idSchema` refuses them.
 */
export function encodePathSegment(segment: string): string {
  return encodeURIComponent(segment)
}

/**
 * Builds `?page=1&limit=20` from the defined entries, in the given order; `''` when none.
 * `extraName`/`extraValue` set one entry as `{ ...query, [extraName]: extraValue }` would (in its
 * place if `query` has it, else last: a list's `page`), without a copy of `query` per request.
 */
export function queryString(
  query: Readonly<Record<string, string | number | undefined>>,
  extraName?: string,
  extraValue?: string | number,
): string {
  let text = ''
  let extraDone = false
  // for-in, not Object.entries: no array of pairs per request (issue 32). Own keys only, as
  // Object.entries: a key inherited from a polluted Object.prototype is not sent.
  for (const key in query) {
    if (!Object.hasOwn(query, key)) continue
    let value = query[key]
    if (key === extraName) {
      value = extraValue
      extraDone = true
    }
    if (value === undefined) continue
    text += `${text === '' ? '?' : '&'}${queryComponent(key)}=${queryComponent(value)}`
  }
  if (!extraDone && extraName !== undefined && extraValue !== undefined) {
    text += `${text === '' ? '?' : '&'}${queryComponent(extraName)}=${queryComponent(extraValue)}`
  }
  return text
}

/**
 * `encodeURIComponent(String(value))`, without calling it for what it would return unchanged:
 * a safe integer (digits and `-`) or a string of unreserved characters only (`A-Z a-z 0-9 - . _ ~`,
 * which it never escapes; `page`, `limit`). `encodeURIComponent` is a call into the runtime,
 * several per request (issue 32).
 */
function queryComponent(value: string | number): string {
  // Anything but a string (a number, or a value a future parameter lets through despite its type):
  // what encodeURIComponent(String(value)) makes of it, a safe integer without the call.
  if (typeof value !== 'string') return Number.isSafeInteger(value) ? `${value}` : encodeURIComponent(String(value))
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    const unreserved =
      (c >= 0x61 && c <= 0x7a) ||
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x30 && c <= 0x39) ||
      c === 0x2d ||
      c === 0x2e ||
      c === 0x5f ||
      c === 0x7e
    if (!unreserved) return encodeURIComponent(value)
  }
  return value
}
