/**
 * Response compression in listen mode, as a real HTTP server does it: the `accept-encoding`
 * request header is negotiated (RFC 9110, section 12.5.3: q-values, `*`, `identity`), the body is
 * compressed with node:zlib, and the response says so (`content-encoding`) and says that it
 * depends on the header (`vary: accept-encoding`). So a test against the fake goes through the
 * same decoding as production.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import type { FakeResponse } from './http.ts'
import type { FakeCompression } from './types.ts'

/** A content coding the fake can send. */
export type ContentCoding = 'br' | 'gzip'

/** The codings the fake compresses with, in its order of preference when q-values tie. */
const SUPPORTED: readonly ContentCoding[] = ['br', 'gzip']

/**
 * The default `compressionMinBytes`: bodies under 1 KiB go uncompressed. With its headers such a
 * response fits one TCP segment (an MSS of 1,460 bytes on Ethernet) compressed or not, so
 * compressing it saves no packet and no round trip, only CPU at both ends: real servers skip them
 * too (nginx's `gzip_min_length`, CloudFront compresses from 1,000 bytes). Documented in TESTING.md
 * and `chat-service-fake --help`.
 */
export const DEFAULT_COMPRESSION_MIN_BYTES = 1024

/** What a listening server does about compression: the codings it offers, and the smallest body it compresses. */
export interface CompressionPolicy {
  readonly codings: readonly ContentCoding[]
  readonly minBytes: number
}

/**
 * The policy of `compression` and `compressionMinBytes` (options of the fake or of one `listen`);
 * `undefined` when compression is off.
 * @throws RangeError for a `compression` that is none of `true`, `false`, `'off'`, `'gzip'`,
 * `'br'`, or a `compressionMinBytes` that is not an integer of at least 0.
 */
export function compressionPolicy(compression: FakeCompression | undefined, minBytes: number | undefined): CompressionPolicy | undefined {
  if (minBytes !== undefined && !(Number.isSafeInteger(minBytes) && minBytes >= 0)) {
    throw new RangeError(`chat-service-sdk/testing: compressionMinBytes must be an integer >= 0, not ${String(minBytes)}`)
  }
  const min = minBytes ?? DEFAULT_COMPRESSION_MIN_BYTES
  switch (compression) {
    case undefined:
    case true:
      return { codings: SUPPORTED, minBytes: min }
    case 'gzip':
    case 'br':
      return { codings: [compression], minBytes: min }
    case false:
    case 'off':
      return undefined
    default:
      throw new RangeError(
        `chat-service-sdk/testing: compression must be true, false, 'off', 'gzip' or 'br', not ${JSON.stringify(compression)}`,
      )
  }
}

/** `name;q=0.5` → `{ name: 'name', q: 0.5 }`; a malformed element is `undefined`. */
function parseElement(element: string): { name: string; q: number } | undefined {
  const [rawName = '', ...params] = element.split(';')
  const name = rawName.trim().toLowerCase()
  if (!/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) return undefined
  let q = 1
  for (const param of params) {
    const [key = '', value = ''] = param.split('=').map((part) => part.trim())
    if (key.toLowerCase() !== 'q') continue
    // RFC 9110 qvalue: 0, 1, or 0.xxx / 1.000 (at most three decimals).
    if (!/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value)) return undefined
    q = Number(value)
  }
  return { name: name === 'x-gzip' ? 'gzip' : name, q }
}

/**
 * The coding to answer a request with, from its `accept-encoding` header: of the codings
 * `offered` (default both, `br` first), the one with the highest q-value above 0 (the first
 * offered when they tie; `*` stands for any coding the header does not name), or `identity` (no
 * compression) when the header is absent or empty, names none of them, or prefers `identity` (a
 * strictly higher q). When every coding, identity included, is refused (`identity;q=0`, or
 * `*;q=0` without identity), the body is still sent uncompressed, as common servers do, rather
 * than 406. Malformed elements are ignored.
 */
export function negotiateCoding(
  acceptEncoding: string | undefined,
  offered: readonly ContentCoding[] = SUPPORTED,
): ContentCoding | 'identity' {
  if (acceptEncoding === undefined || acceptEncoding.trim() === '') return 'identity'
  const weights = new Map<string, number>()
  for (const element of acceptEncoding.split(',')) {
    if (element.trim() === '') continue
    const parsed = parseElement(element)
    // The first mention of a coding counts; a repeat is ignored.
    if (parsed !== undefined && !weights.has(parsed.name)) weights.set(parsed.name, parsed.q)
  }
  const star = weights.get('*')
  const qOf = (name: string): number => weights.get(name) ?? star ?? 0
  let best: ContentCoding | undefined
  for (const coding of offered) if (qOf(coding) > 0 && (best === undefined || qOf(coding) > qOf(best))) best = coding
  if (best === undefined) return 'identity'
  // A client that names a coding wants it, unless it names identity with a strictly higher q.
  const identity = weights.get('identity')
  return identity !== undefined && identity > qOf(best) ? 'identity' : best
}

/**
 * `body` compressed with `coding`. Brotli at quality 4 and gzip at level 6: what servers use for
 * dynamic responses (brotli's default 11 is meant for static files and costs far more CPU). A body
 * this process compressed lately is taken from {@link RECENTLY_COMPRESSED}: the same bytes, in a
 * copy of the caller's own.
 */
export function compressBody(body: Buffer, coding: ContentCoding): Buffer {
  const key = `${coding}:${createHash('sha256').update(body).digest('base64')}`
  const compressed = RECENTLY_COMPRESSED.get(key) ?? compress(body, coding)
  remember(key, compressed)
  return Buffer.from(compressed)
}

function compress(body: Buffer, coding: ContentCoding): Buffer {
  if (coding === 'gzip') return gzipSync(body)
  return brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 4,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  })
}

/**
 * The bodies this process compressed lately, by coding and SHA-256 of the body, least recently
 * used first. A fake sends the same bodies again and again (the pages of a seeded dataset, listed
 * test after test: in this repository's suite 5,078 of 8,471 bodies compressed, 60 %), and
 * compressing an 8 KB page at quality 4 takes some 0.15-0.3 ms of CPU where hashing and copying it
 * take some 0.05 ms. zlib and brotli give the same bytes for the same input and parameters, so what
 * is sent does not change. Callers get copies: the faults that cut or delay a body only read it,
 * but a buffer handed out must not be the one kept.
 */
const RECENTLY_COMPRESSED = new Map<string, Buffer>()
/** What {@link RECENTLY_COMPRESSED} may hold, in compressed bytes: a few hundred pages. */
const RECENTLY_COMPRESSED_MAX_BYTES = 16 * 1024 * 1024
let recentlyCompressedBytes = 0

/** Keeps `compressed` as the most recently used, then lets the least recently used go past the bound. */
function remember(key: string, compressed: Buffer): void {
  const previous = RECENTLY_COMPRESSED.get(key)
  if (previous !== undefined) {
    RECENTLY_COMPRESSED.delete(key)
    recentlyCompressedBytes -= previous.length
  }
  RECENTLY_COMPRESSED.set(key, compressed)
  recentlyCompressedBytes += compressed.length
  for (const [oldest, buffer] of RECENTLY_COMPRESSED) {
    if (recentlyCompressedBytes <= RECENTLY_COMPRESSED_MAX_BYTES) break
    RECENTLY_COMPRESSED.delete(oldest)
    recentlyCompressedBytes -= buffer.length
  }
}

/** `vary` with `accept-encoding` added once (kept when a fault already set it). */
export function varyWithAcceptEncoding(vary: string | undefined): string {
  if (vary === undefined || vary.trim() === '') return 'accept-encoding'
  const names = vary.split(',').map((name) => name.trim().toLowerCase())
  return names.includes('accept-encoding') || names.includes('*') ? vary : `${vary}, accept-encoding`
}

/**
 * `response` as listen mode sends it to a request with this `accept-encoding`, under `policy`
 * (`undefined`: compression off, sent as it is): every non-empty body gets
 * `vary: accept-encoding` (whether it is compressed depends on the header), and one of at least
 * `policy.minBytes` is compressed when the negotiation picks a coding. A body whose
 * `content-encoding` a fault set is sent as it is (so a test can send a broken one).
 */
export function encodeResponse(
  response: FakeResponse,
  acceptEncoding: string | undefined,
  policy: CompressionPolicy | undefined,
): FakeResponse {
  if (policy === undefined || response.body.length === 0 || response.headers['content-encoding'] !== undefined) return response
  const headers = { ...response.headers, vary: varyWithAcceptEncoding(response.headers['vary']) }
  const coding = response.body.length < policy.minBytes ? 'identity' : negotiateCoding(acceptEncoding, policy.codings)
  if (coding === 'identity') return { ...response, headers }
  return { status: response.status, headers: { ...headers, 'content-encoding': coding }, body: compressBody(response.body, coding) }
}
