/**
 * The guide docs/observability.md, checked against a loopback node:http server with
 * OpenTelemetry's own SDK and undici instrumentation and an in-memory span exporter:
 * - the undici instrumentation alone makes one HTTP client span per attempt of an SDK call (a call
 *   retried once after a 503 is two HTTP spans), although the SDK sends through undici's
 *   `dispatch()` with its own handler;
 * - the recipe (examples/otel-tracing.ts, the same text as the guide's snippet) makes one span per
 *   operation, with the HTTP spans of its attempts as children, its attributes set, and its outcome on
 *   failure;
 * - no key secret and no issued token in any span's name, attributes, events or status.
 */
import { readFileSync } from 'node:fs'
import { context, trace, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { APIConnectionError, ChatServiceClient, NotFoundError } from 'chat-service-sdk'
import { instrumentChatServiceSdk } from '../../examples/otel-tracing.ts'
import { KEY_ID, KEY_SECRET, agent, tokenResponse, updatedUser } from '../helpers/fixtures.ts'
import { rejection, startLoopback, targetOf, type LoopbackServer } from '../helpers/loopback.ts'

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.b3RlbC10b2tlbi1wYXlsb2Fk.b3RlbC1zaWduYXR1cmU'
const RECIPE = new URL('../../examples/otel-tracing.ts', import.meta.url)
const GUIDE = new URL('../../docs/observability.md', import.meta.url)

const exporter = new InMemorySpanExporter()
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
const tracer: Tracer = provider.getTracer('observability-test')
let undici: UndiciInstrumentation
let server: LoopbackServer
let client: ChatServiceClient

beforeAll(async () => {
  // What an application's OpenTelemetry set-up does (NodeSDK registers the same context manager).
  context.setGlobalContextManager(new AsyncLocalStorageContextManager())
  trace.setGlobalTracerProvider(provider)
  undici = new UndiciInstrumentation() // subscribes to undici's diagnostics channels at once
  undici.setTracerProvider(provider)
  server = await startLoopback()
})
afterAll(async () => {
  undici.disable()
  trace.disable()
  context.disable()
  await provider.shutdown()
  await server.close()
})
beforeEach(() => {
  server.clear()
  server.respond(ok)
  exporter.reset()
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off' })
})
afterEach(async () => {
  await client.close()
})

/** Agents for a GET, the token for a POST, the user for a PUT; each with a request id. */
function ok(request: { method: string; target: string }): { headers: Record<string, string>; body: unknown } {
  if (request.method === 'POST') return { headers: { 'x-request-id': 'req_token' }, body: tokenResponse(TOKEN) }
  const { pathname } = targetOf(request)
  if (request.method === 'PUT') return { headers: { 'x-request-id': `req_put_${pathname}` }, body: updatedUser() }
  return { headers: { 'x-request-id': 'req_ok' }, body: { data: [agent(1)], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } } }
}

/** The first answer is a 503 (retry at once), then `ok`. */
function busyOnce(): void {
  let calls = 0
  server.respond((request) =>
    ++calls === 1 ? { status: 503, headers: { 'retry-after-ms': '0', 'x-request-id': 'req_busy' }, body: 'busy' } : ok(request),
  )
}

const finished = (): ReadableSpan[] => exporter.getFinishedSpans()
const httpSpans = (): ReadableSpan[] => finished().filter((span) => span.kind === SpanKind.CLIENT)
const operationSpans = (): ReadableSpan[] => finished().filter((span) => span.kind !== SpanKind.CLIENT)
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId

describe("OpenTelemetry's undici instrumentation alone (no recipe)", () => {
  it('makes one HTTP client span per attempt: a call retried once after a 503 is two spans, children of the caller’s span', async () => {
    busyOnce()
    await tracer.startActiveSpan('caller', async (caller) => {
      await client.agents.list()
      caller.end()
    })
    expect(server.arrivals).toHaveLength(2)
    const http = httpSpans()
    expect(http).toHaveLength(2)
    expect(http.map((span) => span.name)).toStrictEqual(['GET', 'GET'])
    expect(http.map((span) => span.attributes['http.response.status_code'])).toStrictEqual([503, 200])
    expect(http.map((span) => span.attributes['url.path'])).toStrictEqual(['/rest/v1/agents', '/rest/v1/agents'])
    expect(http[0]?.status.code).toBe(SpanStatusCode.ERROR)
    const caller = finished().find((span) => span.name === 'caller')
    expect(http.map(parentOf)).toStrictEqual([caller?.spanContext().spanId, caller?.spanContext().spanId])
    expect(operationSpans().map((span) => span.name)).toStrictEqual(['caller']) // no SDK span without the recipe
  })

  it('a connection dropped on every attempt: one HTTP span per attempt, each with the error', async () => {
    server.respond(() => 'destroy')
    await rejection(client.withOptions({ maxRetries: 1 }).agents.list())
    expect(server.arrivals).toHaveLength(2)
    const http = httpSpans()
    expect(http).toHaveLength(2)
    for (const span of http) {
      expect(span.status.code).toBe(SpanStatusCode.ERROR)
      expect(span.attributes['http.response.status_code']).toBeUndefined()
    }
  })
})

describe('the recipe: one span per operation, the HTTP spans of its attempts nested under it', () => {
  let stop: () => void
  beforeEach(() => {
    stop = instrumentChatServiceSdk(tracer)
  })
  afterEach(() => {
    stop()
  })

  it('a call retried once after a 503: one operation span with attempts 2, parent of two HTTP spans', async () => {
    busyOnce()
    await client.agents.list({ limit: 5 })
    const [operation, ...others] = operationSpans()
    expect(others).toHaveLength(0)
    expect(operation?.name).toBe('agents.list')
    expect(operation?.attributes).toStrictEqual({
      'chat_service.operation': 'agents.list',
      'http.request.method': 'GET',
      'url.path': '/rest/v1/agents',
      'url.query': 'limit=5&page=1',
      'chat_service.attempts': 2,
      'http.response.status_code': 200,
      'chat_service.request_id': 'req_ok',
      'chat_service.outcome': 'success',
    })
    expect(operation?.status.code).toBe(SpanStatusCode.UNSET)
    expect(operation?.ended).toBe(true)
    const http = httpSpans()
    expect(http).toHaveLength(2)
    expect(http.map(parentOf)).toStrictEqual([operation?.spanContext().spanId, operation?.spanContext().spanId])
    expect(http.map((span) => span.spanContext().traceId)).toStrictEqual([
      operation?.spanContext().traceId,
      operation?.spanContext().traceId,
    ])
    expect(http.map((span) => span.attributes['http.response.status_code'])).toStrictEqual([503, 200])
    expect(parentOf(operation!)).toBeUndefined() // a root: nothing was active at the call
  })

  it("the operation span is a child of the caller's span, and the caller's context is its own again after the call", async () => {
    await tracer.startActiveSpan('caller', async (caller) => {
      await client.agents.list()
      expect(trace.getActiveSpan()).toBe(caller)
      caller.end()
    })
    const operation = operationSpans().find((span) => span.name === 'agents.list')
    const caller = operationSpans().find((span) => span.name === 'caller')
    expect(parentOf(operation!)).toBe(caller?.spanContext().spanId)
    expect(httpSpans().map(parentOf)).toStrictEqual([operation?.spanContext().spanId])
    // Nothing of the call stays active in a caller that had no span.
    await client.agents.list()
    expect(trace.getActiveSpan()).toBeUndefined()
  })

  it('calls in flight together: each HTTP span is the child of its own call’s span', async () => {
    const ids = ['cu-1', 'cu-2', 'cu-3', 'cu-4', 'cu-5', 'cu-6']
    await Promise.all(ids.map((id) => client.customerUsers.update(id, { name: 'n' })))
    const operations = operationSpans()
    expect(operations).toHaveLength(ids.length)
    const http = httpSpans()
    expect(http).toHaveLength(ids.length)
    for (const span of http) {
      const parent = operations.find((operation) => operation.spanContext().spanId === parentOf(span))
      expect(parent?.name).toBe('customerUsers.update')
      expect(parent?.attributes['url.path']).toBe(span.attributes['url.path'])
      expect(parent?.attributes['chat_service.request_id']).toBe(`req_put_${String(span.attributes['url.path'])}`)
    }
  })

  it('an APIError: the span has status ERROR, the exception, error.type, the HTTP status and the request id', async () => {
    server.respond(() => ({ status: 404, headers: { 'x-request-id': 'req_missing' }, body: { error: 'no such user' } }))
    const error = await rejection(client.customerUsers.update('cu-x', { name: 'n' }))
    expect(error).toBeInstanceOf(NotFoundError)
    const [operation] = operationSpans()
    expect(operation?.status).toStrictEqual({ code: SpanStatusCode.ERROR, message: (error as Error).message })
    expect(operation?.attributes).toMatchObject({
      'chat_service.operation': 'customerUsers.update',
      'http.request.method': 'PUT',
      'url.path': '/rest/v1/customer-users/cu-x',
      'chat_service.attempts': 1,
      'http.response.status_code': 404,
      'chat_service.request_id': 'req_missing',
      'chat_service.outcome': 'error',
      'error.type': 'NotFoundError',
    })
    expect(operation?.events.map((event) => [event.name, event.attributes?.['exception.type']])).toStrictEqual([
      ['exception', 'NotFoundError'],
    ])
    expect(httpSpans().map(parentOf)).toStrictEqual([operation?.spanContext().spanId])
  })

  it('a connection error after retries: attempts counts every attempt, no status, one HTTP span per attempt under it', async () => {
    server.respond(() => 'destroy')
    const error = await rejection(client.withOptions({ maxRetries: 1 }).agents.list())
    expect(error).toBeInstanceOf(APIConnectionError)
    const [operation] = operationSpans()
    expect(operation?.attributes).toMatchObject({
      'chat_service.attempts': 2,
      'chat_service.outcome': 'error',
      'error.type': 'APIConnectionError',
    })
    expect(operation?.attributes['http.response.status_code']).toBeUndefined()
    expect(operation?.status.code).toBe(SpanStatusCode.ERROR)
    expect(httpSpans().map(parentOf)).toStrictEqual([operation?.spanContext().spanId, operation?.spanContext().spanId])
  })

  it('the function it returns stops it: later calls have HTTP spans only', async () => {
    stop()
    await client.agents.list()
    expect(operationSpans()).toHaveLength(0)
    expect(httpSpans()).toHaveLength(1)
  })
})

describe('secrets', () => {
  let stop: () => void
  beforeEach(() => {
    stop = instrumentChatServiceSdk(tracer)
  })
  afterEach(() => {
    stop()
  })

  /** Every rendering of every span: name, attributes, events (exception stacks included), status. */
  function everySpanRendered(): string {
    expect(finished().length).toBeGreaterThan(0)
    return JSON.stringify(
      finished().map((span) => ({
        name: span.name,
        attributes: span.attributes,
        events: span.events,
        status: span.status,
        links: span.links,
      })),
    )
  }

  it('issueToken, token-authenticated and failing calls: no key secret and no token in any span of either kind', async () => {
    const issued = await client.auth.issueToken({ userId: 'ext-1', agentId: 'agent-2' })
    expect(issued.token).toBe(TOKEN)
    busyOnce()
    await client.customerUsers.update('cu-1', { name: 'n' }) // retried: the secret travelled twice in the body
    server.respond((request) => ({ status: 500, headers: { 'x-echo': request.body }, body: { error: 'boom', echo: request.body } }))
    await rejection(client.withOptions({ maxRetries: 0 }).agents.list()) // an error whose body echoes the credentials
    expect(server.arrivals.every((arrival) => arrival.body.includes(KEY_SECRET))).toBe(true)
    expect(operationSpans().map((span) => span.name)).toStrictEqual(['auth.issueToken', 'customerUsers.update', 'agents.list'])
    expect(httpSpans()).toHaveLength(4)
    const rendered = everySpanRendered()
    expect(rendered).toContain('exception') // the failure's stack is there, scrubbed
    for (const secret of [KEY_SECRET, TOKEN]) expect(rendered).not.toContain(secret)
  })

  it("a token passed where an id goes: scrubbed from the SDK's span, but in the HTTP spans' URL as sent", async () => {
    await client.auth.issueToken({ userId: 'ext-1' })
    server.respond(() => ({ status: 404, body: { error: 'not found' } }))
    await rejection(client.customerUsers.update(TOKEN, { name: 'n' }))
    const operation = operationSpans().find((span) => span.name === 'customerUsers.update')
    expect(operation?.attributes['url.path']).toBe('/rest/v1/customer-users/[REDACTED]')
    expect(JSON.stringify(operationSpans().map((span) => [span.name, span.attributes, span.events, span.status]))).not.toContain(TOKEN)
    // The undici instrumentation records url.full and url.path as sent: the guide warns about it.
    const http = httpSpans().find((span) => span.attributes['http.request.method'] === 'PUT')
    expect(http?.attributes['url.path']).toBe(`/rest/v1/customer-users/${TOKEN}`)
  })
})

describe('docs/observability.md', () => {
  it('"One span per operation" shows examples/otel-tracing.ts as it is, so the snippet is the tested code', () => {
    const guide = readFileSync(GUIDE, 'utf8')
    const section = /^## One span per operation\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(guide)?.[1]
    expect(section, 'the guide has a "## One span per operation" section').toBeDefined()
    const snippet = /^```ts\n([\s\S]*?)^```$/m.exec(section!)?.[1]
    expect(snippet).toBe(readFileSync(RECIPE, 'utf8'))
  })
})
