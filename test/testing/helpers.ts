import { request } from 'undici'
import { SAMPLED } from '../helpers/endpoint-samples.ts'
import type { AgentRecord, FakeSeed } from '../../src/testing/index.ts'

export const KEY_A = { keyId: 'key_a', keySecret: 'secret_a' }
export const KEY_B = { keyId: 'key_b', keySecret: 'secret_b' }
export const KEY_EMPTY = { keyId: 'key_empty', keySecret: 'secret_empty' }

const T = (minute: number): string => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString()

/** A small hand-written seed with exact values to assert on. */
export function fixtureSeed(): FakeSeed {
  return {
    companies: [
      {
        id: 'co_a',
        name: 'Company A',
        keys: [KEY_A],
        agents: [
          { id: 'agt_2', name: 'Sales', active: false, created_at: T(2), updated_at: T(3) },
          { id: 'agt_1', name: 'Support', active: true, created_at: T(1), updated_at: T(1) },
          { id: 'agt_0', name: 'Billing', active: true, created_at: T(2), updated_at: T(2) },
        ],
        customerUsers: [
          {
            id: 'u_2',
            external_id: 'ext_2',
            name: 'Bob Stone',
            email: 'bob@example.com',
            metadata: { version: 1, prefs: { lang: 'en' } },
            active: true,
            created_at: T(20),
            last_seen_at: T(25),
          },
          {
            id: 'u_1',
            external_id: 'ext_1',
            name: 'Alice Smith',
            email: 'alice@example.com',
            metadata: { version: 1, tier: 'gold', prefs: { lang: 'de' } },
            active: true,
            created_at: T(10),
            last_seen_at: T(15),
          },
          {
            id: 'u_3',
            external_id: 'ext_3',
            name: 'Alice Jones',
            email: 'ajones@example.org',
            metadata: {},
            active: false,
            created_at: T(30),
            last_seen_at: T(30),
          },
          {
            id: 'u/slash',
            external_id: 'ext_slash',
            name: 'Slash User',
            email: 'slash@example.com',
            metadata: {},
            active: true,
            created_at: T(40),
            last_seen_at: T(40),
          },
        ],
        conversations: [
          { id: 'conv_1', title: 'Order status', customer_user_id: 'u_1', created_at: T(100), updated_at: T(110), message_count: 99 },
          { id: 'conv_declared', title: 'Imported', customer_user_id: 'u_2', created_at: T(120), updated_at: T(120), message_count: 7 },
          { id: 'conv/2 ü', title: 'Odd id', customer_user_id: 'u_2', created_at: T(130), updated_at: T(131) },
        ],
        messages: [
          // deliberately out of order; m_b and m_a share a timestamp (tie broken by id)
          { id: 'm_c', content: 'third', role: 'user', conversation_id: 'conv_1', created_at: T(105) },
          { id: 'm_b', content: 'second (b)', role: 'assistant', conversation_id: 'conv_1', created_at: T(102) },
          { id: 'm_first', content: 'first', role: 'user', conversation_id: 'conv_1', created_at: T(101) },
          { id: 'm_a', content: 'second (a)', role: 'assistant', conversation_id: 'conv_1', created_at: T(102) },
          { id: 'm_odd', content: 'hello', role: 'user', conversation_id: 'conv/2 ü', created_at: T(131) },
        ],
      },
      {
        id: 'co_b',
        keys: [KEY_B],
        agents: [{ id: 'agt_b', name: 'B agent', active: true, created_at: T(1), updated_at: T(1) }],
        customerUsers: [
          {
            id: 'u_b1',
            external_id: 'ext_1',
            name: 'Other Company User',
            email: 'x@example.net',
            metadata: {},
            active: true,
            created_at: T(1),
            last_seen_at: T(1),
          },
        ],
        conversations: [{ id: 'conv_b', title: 'B conv', customer_user_id: 'u_b1', created_at: T(1), updated_at: T(2) }],
        messages: [{ id: 'm_b1', content: 'hi', role: 'user', conversation_id: 'conv_b', created_at: T(2) }],
      },
      { id: 'co_empty', keys: [KEY_EMPTY] },
    ],
  }
}

export interface CallOptions {
  /** JSON body (serialised); credentials are NOT added automatically. */
  body?: unknown
  /** Raw body text (wins over `body`). */
  rawBody?: string
  headers?: Record<string, string>
  /** Default `application/json` when there is a body. */
  contentType?: string | null
}

/** The fake's error body. */
export interface ErrorBody {
  error: { status: number; message: string }
}

/** `pagination` of a list body. */
export interface Pagination {
  page: number
  limit: number
  total: number
  total_pages: number
}

/** A list body; a messages list also has `conversation` (see {@link MessagesBody}). */
export interface ListBody<T> {
  data: T[]
  pagination: Pagination
}

/** The body of `GET /rest/v1/conversations/:id/messages`. */
export interface MessagesBody<T> extends ListBody<T> {
  conversation: { id: string; title: string }
}

/** The body of `POST /rest/v1/auth/token`. */
export interface TokenBody {
  token: string
  user: { id: string; externalId: string; companyId: string; agentId: string | null }
  agent: Pick<AgentRecord, 'id' | 'name' | 'active'> | null
}

/** `T`: the JSON body the caller expects (not checked); `unknown` by default. */
export interface CallResult<T = unknown> {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  /** The parsed body, or `undefined` when the body is not JSON. */
  json: T
}

/**
 * One raw HTTP request with undici (which, unlike fetch, can send a GET body).
 * `T` types the JSON body the test expects; it is not checked.
 */
export async function call<T = unknown>(base: string, method: string, path: string, opts: CallOptions = {}): Promise<CallResult<T>> {
  const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body))
  const headers: Record<string, string> = { ...opts.headers }
  if (body !== undefined && opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json'
  const res = await request(base + path, { method: method as 'GET', headers, ...(body === undefined ? {} : { body }) })
  const text = await res.body.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.statusCode, headers: res.headers, text, json: json as T }
}

/** Every endpoint of the spec (from its table, src/endpoints.ts, through the tests' samples), with a valid path for company A. */
export const ENDPOINTS: ReadonlyArray<{ method: string; path: string; extra?: Record<string, unknown> }> = SAMPLED.map(
  ({ method, path, members }) => ({
    method,
    path,
    ...(members === undefined ? {} : { extra: { ...members } }),
  }),
)
