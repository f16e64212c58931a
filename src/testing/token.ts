/**
 * Chat tokens (spec: Authentication 2, endpoint 1): JWT-style HS256 tokens,
 * `base64url(header).base64url(claims).base64url(HMAC-SHA256 signature)`,
 * made with `node:crypto`. The spec does not fix the token format; this is the
 * fake's choice.
 *
 * @module
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { TokenClaims, VerifyTokenResult } from './types.ts'

/** Default token lifetime: 24 hours, in seconds (spec: Limits). */
export const DEFAULT_TOKEN_LIFETIME_S = 24 * 60 * 60

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')
const B64URL = /^[A-Za-z0-9_-]+$/

/**
 * Parses `expiresIn`: `<positive integer><h|d>` (e.g. `1h`, `30d`), returning
 * seconds, or `undefined` when invalid. The spec names only the hour and day
 * units and no maximum; values whose seconds are not a safe integer are invalid.
 */
export function parseExpiresIn(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined
  const match = /^([1-9][0-9]*)([hd])$/.exec(value)
  if (!match) return undefined
  const seconds = Number(match[1]) * (match[2] === 'h' ? 3600 : 86400)
  return Number.isSafeInteger(seconds) ? seconds : undefined
}

/** Signs and verifies chat tokens with one HMAC key. */
export class TokenSigner {
  readonly #secret: string

  constructor(secret: string) {
    this.#secret = secret
  }

  #sign(input: string): string {
    return createHmac('sha256', this.#secret).update(input).digest('base64url')
  }

  /** Returns a signed token for the claims. */
  sign(claims: TokenClaims): string {
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url')
    const input = `${HEADER}.${payload}`
    return `${input}.${this.#sign(input)}`
  }

  /** Checks structure, then signature, then expiry (`exp <= nowSeconds` is expired). */
  verify(token: string, nowSeconds: number): VerifyTokenResult {
    if (typeof token !== 'string') return { valid: false, reason: 'malformed' }
    const parts = token.split('.')
    if (parts.length !== 3) return { valid: false, reason: 'malformed' }
    const [header, payload, signature] = parts as [string, string, string]
    if (!B64URL.test(header) || !B64URL.test(payload) || !B64URL.test(signature)) {
      return { valid: false, reason: 'malformed' }
    }
    const decodedHeader = parseJson(Buffer.from(header, 'base64url').toString('utf8'))
    if (!isObject(decodedHeader) || decodedHeader['alg'] !== 'HS256') return { valid: false, reason: 'malformed' }
    const expected = Buffer.from(this.#sign(`${header}.${payload}`))
    const actual = Buffer.from(signature)
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
      return { valid: false, reason: 'bad-signature' }
    }
    const claims = parseJson(Buffer.from(payload, 'base64url').toString('utf8'))
    if (!isClaims(claims)) return { valid: false, reason: 'malformed' }
    if (claims.exp <= nowSeconds) return { valid: false, reason: 'expired' }
    return { valid: true, claims }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isClaims(value: unknown): value is TokenClaims {
  return (
    isObject(value) &&
    typeof value['sub'] === 'string' &&
    typeof value['external_id'] === 'string' &&
    typeof value['company_id'] === 'string' &&
    (typeof value['agent_id'] === 'string' || value['agent_id'] === null) &&
    Number.isSafeInteger(value['iat']) &&
    Number.isSafeInteger(value['exp'])
  )
}
