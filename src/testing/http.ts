/**
 * The fake's HTTP vocabulary, shared by both transports (listen and msw), the router, the
 * endpoints and the faults: one request type, one response type, and the few helpers that build
 * responses.
 *
 * @module
 */
import { randomUUID } from 'node:crypto'

/** A request as a transport hands it to the fake. */
export interface FakeRequest {
  /** Upper-case method. */
  method: string
  /** Pathname as received, not decoded: recorded, and matched against faults. */
  path: string
  /**
   * Pathname relative to the service root, not decoded: routed. Equals `path` except in msw mode
   * with a base URL that has a path prefix.
   */
  servicePath: string
  /** `''` or `?…`. */
  search: string
  /** Lower-case header names; repeated headers joined with `, `. */
  headers: Record<string, string>
  /** Body text; `undefined` when there is none or it is invisible. */
  rawBody: string | undefined
  /** `false` when the transport cannot see the body (msw mode, GET and HEAD). */
  bodyVisible: boolean
}

/** A response before a transport writes it. */
export interface FakeResponse {
  status: number
  /** Lower-case header names. `content-length` is the transport's job. */
  headers: Record<string, string>
  body: Buffer
}

/** `content-type` of every JSON response the fake builds. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
}

/** A JSON response with the fake's content type. */
export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): FakeResponse {
  return { status, headers: { 'content-type': JSON_CONTENT_TYPE, ...headers }, body: Buffer.from(JSON.stringify(value)) }
}

/**
 * The fake's error response: `{ "error": { "status": <n>, "message": "..." } }` (the spec shows no
 * error body; this shape is the fake's choice).
 */
export function errorResponse(status: number, message?: string, headers: Record<string, string> = {}): FakeResponse {
  return jsonResponse(status, { error: { status, message: message ?? STATUS_TEXT[status] ?? `HTTP ${status}` } }, headers)
}

/** Statuses that never carry a body. */
export function isBodilessStatus(status: number): boolean {
  return status < 200 || status === 204 || status === 205 || status === 304
}

/** Whether a `content-type` names JSON (`application/json` or `application/*+json`). */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false
  const media = (value.split(';')[0] ?? '').trim().toLowerCase()
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'))
}

/** The response header that carries the fake's request id. */
export const REQUEST_ID_HEADER = 'x-request-id'

/**
 * A new request id: `req_` and 32 random hex digits (a UUID's randomness), unique across requests,
 * fakes and processes, as a real service's ids are. Random rather than counted so that ids from two
 * fakes, or two runs, never collide in a log.
 */
export function newRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`
}
