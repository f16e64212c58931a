/** Every documented error status of every endpoint (spec, Errors) mapped to its class, through msw. */
import { http, HttpResponse, type HttpHandler } from 'msw'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ChatServiceError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  ChatServiceClient,
} from 'chat-service-sdk'
import { SAMPLED } from '../helpers/endpoint-samples.ts'
import { API, BASE, KEY_ID, KEY_SECRET, tokenResponse } from '../helpers/fixtures.ts'
import { setupMsw } from '../helpers/msw.ts'

const msw = setupMsw()
let client: ChatServiceClient

beforeEach(() => {
  // maxRetries 0: 429 and >= 500 would otherwise be retried.
  client = new ChatServiceClient({ baseUrl: BASE, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
})
afterEach(async () => {
  await client.close()
})

type ErrorClass = abstract new (...args: never[]) => APIError
const CLASS_BY_STATUS: Record<number, ErrorClass> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
  500: InternalServerError,
  502: InternalServerError,
  503: InternalServerError,
  504: InternalServerError,
}

interface Endpoint {
  readonly name: string
  readonly method: 'GET' | 'PUT' | 'POST'
  /** The request path as the SDK sends it for `call` (without the query). */
  readonly pathname: string
  readonly route: string
  readonly call: () => PromiseLike<unknown>
}

/** Every endpoint of the spec's table, called as its sample does. */
const endpoints: Record<string, Endpoint> = Object.fromEntries(
  SAMPLED.map((sample) => [
    sample.name,
    { name: sample.name, method: sample.method, pathname: sample.path, route: `${BASE}${sample.path}`, call: () => sample.call(client) },
  ]),
)

function handler(endpoint: Endpoint, respond: () => Response): HttpHandler {
  const method = endpoint.method === 'GET' ? http.get : endpoint.method === 'PUT' ? http.put : http.post
  return method(endpoint.route, respond)
}

async function failure(endpoint: Endpoint): Promise<APIError> {
  const error = await endpoint.call().then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(APIError)
  return error as APIError
}

/** The spec's Errors table, from the endpoints' table (src/endpoints.ts). */
const documented: [string, number][] = SAMPLED.flatMap((sample) =>
  sample.endpoint.errors.map((status): [string, number] => [sample.name, status]),
)

it('reads the documented statuses from the table', () => {
  expect(documented.length).toBeGreaterThan(10)
  expect(documented).toContainEqual(['conversations.messages.list', 404])
})

describe('documented error statuses', () => {
  it.each(documented)('%s → %i maps to its class with status, headers, JSON body, method and path', async (name, status) => {
    const endpoint = endpoints[name] as Endpoint
    const body = { error: { code: `E${status}`, message: `failure ${status}` }, request_id: 'req-1' }
    msw.use(handler(endpoint, () => HttpResponse.json(body, { status, headers: { 'x-request-id': 'req-1' } })))

    const error = await failure(endpoint)

    expect(error).toBeInstanceOf(CLASS_BY_STATUS[status] as ErrorClass)
    expect(error).toBeInstanceOf(ChatServiceError)
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe((CLASS_BY_STATUS[status] as ErrorClass).name)
    expect(error.status).toBe(status)
    expect(error.headers['x-request-id']).toBe('req-1')
    expect(error.headers['content-type']).toContain('application/json')
    expect(error.body).toEqual(body)
    expect(error.method).toBe(endpoint.method)
    expect(error.path.split('?')[0]).toBe(endpoint.pathname)
    expect(error.message).toContain(String(status))
    expect(msw.count()).toBe(1)
  })

  it.each(documented)('%s → %i keeps a text body as text', async (name, status) => {
    const endpoint = endpoints[name] as Endpoint
    msw.use(handler(endpoint, () => new HttpResponse('plain failure text', { status, headers: { 'content-type': 'text/plain' } })))
    const error = await failure(endpoint)
    expect(error).toBeInstanceOf(CLASS_BY_STATUS[status] as ErrorClass)
    expect(error.body).toBe('plain failure text')
  })

  it('an empty error body is kept as undefined', async () => {
    const endpoint = endpoints['agents.list'] as Endpoint
    msw.use(handler(endpoint, () => new HttpResponse(null, { status: 401 })))
    const error = await failure(endpoint)
    expect(error).toBeInstanceOf(AuthenticationError)
    expect(error.body).toBeUndefined()
  })

  it('path keeps the query string as sent', async () => {
    const endpoint = endpoints['agents.list'] as Endpoint
    msw.use(handler(endpoint, () => HttpResponse.json({}, { status: 400 })))
    const error = await client.agents.list({ page: 3, limit: 7 }).then(
      () => undefined,
      (e: unknown) => e as APIError,
    )
    expect(error).toBeInstanceOf(BadRequestError)
    const sent = (await msw.requests())[0]
    expect(sent).toBeDefined()
    expect(error?.path).toBe(`${sent?.url.pathname}${sent?.url.search}`)
    expect(new URLSearchParams(error?.path.split('?')[1]).get('page')).toBe('3')
  })
})

describe('the other status classes', () => {
  it.each([403, 409, 422, 429, 500, 502, 503, 504])('%i maps to its class on every endpoint', async (status) => {
    for (const endpoint of Object.values(endpoints)) {
      // A client for each endpoint: a 429 pauses the client that met it (a second each), which would
      // hold up the next endpoint's call, not change what it throws.
      await client.close()
      client = new ChatServiceClient({ baseUrl: BASE, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
      msw.use(handler(endpoint, () => HttpResponse.json({ message: 'no' }, { status })))
      const error = await failure(endpoint)
      expect(error, endpoint.name).toBeInstanceOf(CLASS_BY_STATUS[status] as ErrorClass)
      expect(error.status).toBe(status)
      expect(error.method).toBe(endpoint.method)
    }
  })

  it.each([405, 410, 418, 451])('an unlisted 4xx (%i) is a plain APIError', async (status) => {
    const endpoint = endpoints['agents.list'] as Endpoint
    msw.use(handler(endpoint, () => HttpResponse.json({ message: 'no' }, { status })))
    const error = await failure(endpoint)
    expect(error.constructor).toBe(APIError)
    expect(error.status).toBe(status)
  })
})

describe('token issuance: only 200 is success', () => {
  it.each([201, 202, 203, 206])('%i with a valid token body is a failure (APIError)', async (status) => {
    const endpoint = endpoints['auth.issueToken'] as Endpoint
    msw.use(handler(endpoint, () => HttpResponse.json(tokenResponse(), { status })))
    const error = await failure(endpoint)
    expect(error.constructor).toBe(APIError)
    expect(error.status).toBe(status)
    expect(error.method).toBe('POST')
    expect(error.path).toBe('/rest/v1/auth/token')
    expect(msw.count()).toBe(1)
  })

  it('204 (no body) is a failure (APIError)', async () => {
    const endpoint = endpoints['auth.issueToken'] as Endpoint
    msw.use(handler(endpoint, () => new HttpResponse(null, { status: 204 })))
    const error = await failure(endpoint)
    expect(error.status).toBe(204)
  })

  it.each([400, 401, 403, 404, 409, 422, 429, 500])('%i maps to its class', async (status) => {
    const endpoint = endpoints['auth.issueToken'] as Endpoint
    msw.use(handler(endpoint, () => HttpResponse.json({ error: 'x' }, { status })))
    const error = await failure(endpoint)
    expect(error).toBeInstanceOf(CLASS_BY_STATUS[status] as ErrorClass)
  })
})

describe('retries are on by default for 429 and 500 (which is why the tests above pass maxRetries: 0)', () => {
  it('a 500 then a 200 succeeds with default options', async () => {
    const retrying = new ChatServiceClient({ baseUrl: BASE, keyId: KEY_ID, keySecret: KEY_SECRET })
    try {
      let calls = 0
      msw.use(
        http.get(`${API}/agents`, () => {
          calls++
          return calls === 1
            ? HttpResponse.json({ error: 'boom' }, { status: 500, headers: { 'retry-after-ms': '0' } })
            : HttpResponse.json({ data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } })
        }),
      )
      const page = await retrying.agents.list()
      expect(page.data).toEqual([])
      expect(calls).toBe(2)
    } finally {
      await retrying.close()
    }
  })

  it('maxRetries: 0 per call sends exactly one request', async () => {
    const retrying = new ChatServiceClient({ baseUrl: BASE, keyId: KEY_ID, keySecret: KEY_SECRET })
    try {
      msw.use(http.get(`${API}/agents`, () => HttpResponse.json({}, { status: 429, headers: { 'retry-after-ms': '0' } })))
      const error = await retrying.agents.list({}, { maxRetries: 0 }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(RateLimitError)
      expect(msw.count()).toBe(1)
    } finally {
      await retrying.close()
    }
  })
})
