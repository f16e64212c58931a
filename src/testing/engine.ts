/**
 * The transport-neutral core shared by listen mode and msw mode: records the request, consumes a
 * queued fault, routes the request and returns the plan that the transport carries out (delays,
 * body, drops).
 *
 * @module
 */
import type { CompressionPolicy } from './content-coding.ts'
import { ROUTES } from './endpoints.ts'
import { FaultQueue, syntheticResponse } from './faults.ts'
import { errorResponse, isBodilessStatus, newRequestId, REQUEST_ID_HEADER, type FakeRequest, type FakeResponse } from './http.ts'
import { Router, type RouteOptions, type ServiceContext } from './router.ts'
import type { DeprecationHeaders, RecordedRequest } from './types.ts'

/** What a transport must do for one request. */
export interface ResponsePlan {
  /** The request's id, in the response's `x-request-id` (unless a fault's headers replace it) and its record. */
  requestId: string
  /** `null`: reset the connection before any response byte. */
  response: FakeResponse | null
  /** ms to wait before the headers (fixed latency plus fault `delayMs`). */
  delayMs: number
  /** ms to wait after the headers and the first half of the body. */
  bodyDelayMs: number
  /** Destroy the connection after the headers and the first half of the body. */
  dropMidBody: boolean
}

const router = new Router(ROUTES)

/** How an engine serves, beyond the data (see `FakeChatServiceOptions`). */
export interface EngineOptions {
  /** ms added before every response. */
  latencyMs: number
  /** How many requests the log keeps (the latest ones): 0 records nothing, `Infinity` everything. */
  maxRecordedRequests: number
  /** How listen mode compresses responses (`undefined`: never); a server's `listen` options may replace it. */
  compression: CompressionPolicy | undefined
  /** The deprecation notice every response carries (`setDeprecation` changes it), or none. */
  deprecation: DeprecationHeaders | undefined
}

/** Request recording, faults and routing of one fake service. */
export class Engine {
  readonly faults = new FaultQueue()
  readonly #requests: RecordedRequest[] = []
  readonly context: ServiceContext
  readonly options: EngineOptions

  constructor(context: ServiceContext, options: EngineOptions) {
    this.context = context
    this.options = options
  }

  /** Requests recorded so far, oldest first (a live view). */
  get requests(): readonly RecordedRequest[] {
    return this.#requests
  }

  /** Forgets the recorded requests. */
  clearRequests(): void {
    this.#requests.length = 0
  }

  /** Records, applies a fault if one is queued, and handles the request. */
  process(req: FakeRequest, options: RouteOptions = {}): ResponsePlan {
    const requestId = newRequestId()
    const record = this.options.maxRecordedRequests > 0 ? recordOf(req, requestId) : undefined
    if (record !== undefined) {
      this.#requests.push(record)
      // One at a time: `requests` is a live view, and it must never hold more than asked.
      if (this.#requests.length > this.options.maxRecordedRequests) this.#requests.shift()
    }
    const fault = this.faults.take(req.method, req.path)
    const plan: ResponsePlan = {
      requestId,
      response: null,
      delayMs: this.options.latencyMs + (fault?.delayMs ?? 0),
      bodyDelayMs: fault?.bodyDelayMs ?? 0,
      dropMidBody: fault?.dropConnection === 'mid-body',
    }
    if (fault?.dropConnection === 'before-headers') return plan
    let response = fault ? syntheticResponse(fault) : undefined
    if (!response) {
      try {
        response = router.handle(this.context, req, options)
      } catch (error) {
        // A bug in the fake or odd seed data: answer 500 rather than crash the test process.
        response = errorResponse(500, `Fake service error: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
    // Every response carries its id, synthetic ones included; a fault's own headers may replace it.
    const headers: Record<string, string> = { ...response.headers, [REQUEST_ID_HEADER]: requestId }
    const notice = this.options.deprecation
    if (notice?.deprecation !== undefined) headers['deprecation'] = notice.deprecation
    if (notice?.sunset !== undefined) headers['sunset'] = notice.sunset
    if (notice?.link !== undefined) headers['link'] = notice.link
    if (fault?.headers) for (const [name, value] of Object.entries(fault.headers)) headers[name.toLowerCase()] = value
    response = { ...response, headers }
    if (isBodilessStatus(response.status)) response = { ...response, body: Buffer.alloc(0) }
    if (record !== undefined) record.status = response.status
    plan.response = response
    return plan
  }
}

function recordOf(req: FakeRequest, requestId: string): RecordedRequest {
  const query: Record<string, string> = {}
  for (const [name, value] of new URLSearchParams(req.search)) {
    // defineProperty, not assignment: a parameter named `__proto__` must stay a plain key.
    if (!Object.hasOwn(query, name)) Object.defineProperty(query, name, { value, enumerable: true, writable: true, configurable: true })
  }
  let body: unknown = undefined
  const rawBody = req.bodyVisible && req.rawBody !== '' ? req.rawBody : undefined
  if (rawBody !== undefined) {
    try {
      body = JSON.parse(rawBody)
    } catch {
      body = rawBody
    }
  }
  return {
    method: req.method,
    path: req.path,
    rawPath: req.path + req.search,
    query,
    headers: { ...req.headers },
    body,
    rawBody,
    bodyVisible: req.bodyVisible,
    time: Date.now(),
    requestId,
    status: undefined,
  }
}
