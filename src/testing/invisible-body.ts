// msw mode's GET requests: msw hands handlers a fetch `Request`, which cannot carry a body on GET,
// so the fake cannot read the credentials or the customer-user filters there. It can still read
// the headers, and `content-length` tells the body's exact size. A client that sends the
// credentials alone as compact JSON, `JSON.stringify({ keyId, keySecret })` (what the SDK sends
// on every GET without filters), sends a body of a length the fake can compute for each key.
//
// So the fake serves a GET only when its `content-length` is that of a credentials-only body of a
// key of exactly one company (or of the company named by `companyForGet`), and serves it as that
// company with no filter, which is then the truth. Anything else (filters, credentials the fake
// does not know, pretty-printed JSON, a length it cannot tell) could be answered only by guessing,
// so it gets 501 with a message that says why and points to listen mode. What msw mode still
// cannot tell is a wrong secret of the right length: see TESTING.md, "What msw mode cannot see".
import { errorResponse, isJsonContentType, type FakeRequest, type FakeResponse } from './http.ts'
import type { CompanyState, ServiceState } from './state.ts'

/**
 * Response header set on every 501 of msw mode, with the same explanation as the error body, for
 * tools that show headers rather than bodies.
 */
export const WARNING_HEADER = 'x-fake-service-warning'

/**
 * The status of an answer msw mode cannot give faithfully. 501, not 500 (the SDK retries 500):
 * the same request would fail the same way every time.
 */
export const CANNOT_SEE_STATUS = 501

const LISTEN_HINT = 'use listen mode (fake.listen()) for requests whose GET body matters'

/** Byte length of the credentials-only body of a key, as the SDK sends it. */
function credentialsLength(key: { keyId: string; keySecret: string }): number {
  return Buffer.byteLength(JSON.stringify({ keyId: key.keyId, keySecret: key.keySecret }))
}

/**
 * Company ids for a message: the first few only, so that the SDK's error message (it keeps about
 * 300 characters) still ends with the hint.
 */
function listIds(companies: readonly CompanyState[]): string {
  const ids = companies.slice(0, 5).map((c) => c.id)
  return companies.length > ids.length ? `${ids.join(', ')}, ...` : ids.join(', ')
}

function cannotSee(message: string): { refused: FakeResponse } {
  // A header value must be visible ASCII (seeded company ids need not be).
  return { refused: errorResponse(CANNOT_SEE_STATUS, message, { [WARNING_HEADER]: message.replace(/[^\x20-\x7e]/g, '?') }) }
}

function unauthenticated(reason: string): { refused: FakeResponse } {
  return { refused: errorResponse(401, `Missing API credentials (${reason})`) }
}

/**
 * The company an msw-mode GET is served as, or the response that refuses it: 401 when the
 * headers show no JSON body (as listen mode answers a request without credentials), 501 when the
 * body may hold more than credentials or credentials of another company.
 *
 * @param bodyFields - members besides the credentials that the endpoint reads from the body,
 *   named in the 501 message (e.g. the customer-user filters).
 */
export function companyForInvisibleBody(
  state: ServiceState,
  req: FakeRequest,
  companyForGet: string | undefined,
  bodyFields: readonly string[],
): { company: CompanyState; keyId: string } | { refused: FakeResponse } {
  const contentType = req.headers['content-type']
  const declared = req.headers['content-length']
  if (declared === undefined && req.headers['transfer-encoding'] === undefined) {
    return unauthenticated('no request body')
  }
  if (!isJsonContentType(contentType)) return unauthenticated(`body is not JSON: content-type ${contentType ?? '(none)'}`)
  const length = declared === undefined ? Number.NaN : Number(declared)
  const where = `${req.method} ${req.path}`
  if (!Number.isSafeInteger(length)) {
    return cannotSee(`msw mode cannot see GET bodies and ${where} has no content-length to tell its size: ${LISTEN_HINT}`)
  }
  if (length === 0) return unauthenticated('no request body')

  let candidates = [...state.companies.values()]
  if (companyForGet !== undefined) {
    const chosen = state.companies.get(companyForGet)
    if (!chosen) {
      return cannotSee(`companyForGet ${companyForGet} is not a company of this fake (${listIds(candidates) || 'none'})`)
    }
    candidates = [chosen]
  }
  const matching = candidates.filter((c) => c.keys.some((k) => credentialsLength(k) === length))
  const [only] = matching
  if (only !== undefined && matching.length === 1) {
    // The key, for the rate limit: the company's first key of that length (several are indistinguishable).
    const key = only.keys.find((k) => credentialsLength(k) === length) as { keyId: string }
    return { company: only, keyId: key.keyId }
  }

  if (matching.length > 1) {
    return cannotSee(
      `msw mode cannot see GET bodies, and a ${length}-byte credentials body fits keys of several companies ` +
        `(${listIds(matching)}): pass createFakeHandlers(fake, baseUrl, { companyForGet }), or ${LISTEN_HINT}`,
    )
  }
  const scope = companyForGet === undefined ? 'any company' : `company ${companyForGet} (companyForGet)`
  const expected = [...new Set(candidates.flatMap((c) => c.keys.map(credentialsLength)))].sort((a, b) => a - b)
  const fields = bodyFields.length > 0 ? `filters (${bodyFields.join(', ')}), ` : ''
  return cannotSee(
    `msw mode cannot see GET bodies: the ${length}-byte body of ${where} is not a credentials-only body of a key of ${scope} ` +
      `(${expected.length > 0 ? `${expected.join(' or ')} bytes` : 'no keys'}), so it may hold ${fields}other credentials or other JSON: ${LISTEN_HINT}`,
  )
}
