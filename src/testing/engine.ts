/**
 * The transport-neutral core shared by listen mode and msw mode: records the
 * request, consumes a queued fault, runs the route and returns a plan that the
 * transport carries out (delays, body, drops).
 *
 * @module
 */
import { FaultQueue, syntheticResponse } from './faults.ts'
import { errorResponse, handleRequest, type CoreResponse, type RouteContext } from './routes.ts'
import type { RecordedRequest } from './types.ts'

/** A request as a transport received it. */
export interface IncomingRequest {
  /** Upper-case method. */
  method: string
  /** Pathname as received, not decoded (recorded and matched against faults). */
  pathname: string
  /** Pathname relative to the service root (differs only when msw's base URL has a path prefix). */
  servicePathname: string
  /** `''` or `?…`. */
  search: string
  /** Lower-case header names. */
  headers: Record<string, string>
  rawBody: string | undefined
  bodyVisible: boolean
}

/** What a transport must do for one request. */
export interface ResponsePlan {
  /** `null`: reset the connection before any response byte. */
  response: { status: number; headers: Record<string, string>; body: Buffer } | null
  /** ms to wait before the headers (fixed latency plus fault `delayMs`). */
  delayMs: number
  /** ms to wait after the headers and the first half of the body. */
  bodyDelayMs: number
  /** Destroy the connection after the headers and the first half of the body. */
  dropMidBody: boolean
}

/** Statuses that never carry a body. */
export function isBodilessStatus(status: number): boolean {
  return status < 200 || status === 204 || status === 205 || status === 304
}

/** Request recording, faults and routing of one fake service. */
export class Engine {
  readonly faults = new FaultQueue()
  readonly requests: RecordedRequest[] = []
  readonly context: RouteContext
  latencyMs: number
  record: boolean

  constructor(context: RouteContext, latencyMs: number, record: boolean) {
    this.context = context
    this.latencyMs = latencyMs
    this.record = record
  }

  /** Records, applies a fault if one is queued, and handles the request. */
  process(req: IncomingRequest, options: { companyForInvisibleBody?: string | undefined } = {}): ResponsePlan {
    if (this.record) this.requests.push(recordOf(req))
    const fault = this.faults.take(req.method, req.pathname)
    const plan: ResponsePlan = {
      response: null,
      delayMs: this.latencyMs + (fault?.delayMs ?? 0),
      bodyDelayMs: fault?.bodyDelayMs ?? 0,
      dropMidBody: fault?.dropConnection === 'mid-body',
    }
    const synthetic = fault ? syntheticResponse(fault) : undefined
    if (fault?.dropConnection === 'before-headers') return plan
    if (synthetic) {
      plan.response = synthetic
    } else {
      let core: CoreResponse
      try {
        core = handleRequest(
          { ...this.context, companyForInvisibleBody: options.companyForInvisibleBody },
          {
            method: req.method,
            pathname: req.servicePathname,
            search: req.search,
            headers: req.headers,
            rawBody: req.rawBody,
            bodyVisible: req.bodyVisible,
          },
        )
      } catch (error) {
        // A bug in the fake or odd seed data: answer 500 rather than crash the test process.
        core = errorResponse(500, `Fake service error: ${error instanceof Error ? error.message : String(error)}`)
      }
      plan.response = { status: core.status, headers: core.headers, body: Buffer.from(core.body) }
    }
    if (fault?.headers) {
      const headers = { ...plan.response.headers }
      for (const [name, value] of Object.entries(fault.headers)) headers[name.toLowerCase()] = value
      plan.response.headers = headers
    }
    if (isBodilessStatus(plan.response.status)) plan.response.body = Buffer.alloc(0)
    return plan
  }
}

function recordOf(req: IncomingRequest): RecordedRequest {
  const query: Record<string, string> = {}
  for (const [name, value] of new URLSearchParams(req.search)) {
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
    path: req.pathname,
    rawPath: req.pathname + req.search,
    query,
    headers: { ...req.headers },
    body,
    rawBody,
    bodyVisible: req.bodyVisible,
    time: Date.now(),
  }
}
