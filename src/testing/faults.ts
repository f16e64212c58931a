/**
 * Fault injection: the FIFO queue behind `failNext(n, fault)`, and the synthetic response a fault
 * asks for. The engine turns a fault into the plan a transport carries out.
 *
 * @module
 */
import { errorResponse, JSON_CONTENT_TYPE, type FakeResponse } from './http.ts'
import type { FaultSpec } from './types.ts'

interface QueuedFault {
  remaining: number
  spec: FaultSpec
}

function checkMs(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
    throw new RangeError(`chat-service-sdk/testing: fault ${name} must be a finite number of ms >= 0`)
  }
}

/** The queue behind `failNext`. */
export class FaultQueue {
  #queue: QueuedFault[] = []

  /** Queues `spec` for the next `n` matching requests. */
  add(n: number, spec: FaultSpec): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError('chat-service-sdk/testing: failNext(n) needs an integer n >= 0')
    checkMs('delayMs', spec.delayMs)
    checkMs('bodyDelayMs', spec.bodyDelayMs)
    if (spec.status !== undefined && !(Number.isInteger(spec.status) && spec.status >= 200 && spec.status <= 599)) {
      throw new RangeError('chat-service-sdk/testing: fault status must be an integer from 200 to 599')
    }
    if (n > 0) this.#queue.push({ remaining: n, spec })
  }

  /** Takes one use of the first queued fault matching the request. */
  take(method: string, path: string): FaultSpec | undefined {
    for (let i = 0; i < this.#queue.length; i++) {
      const entry = this.#queue[i] as QueuedFault
      if (!matches(entry.spec, method, path)) continue
      entry.remaining--
      if (entry.remaining === 0) this.#queue.splice(i, 1)
      return entry.spec
    }
    return undefined
  }

  /** Number of fault uses still queued. */
  get pending(): number {
    return this.#queue.reduce((sum, entry) => sum + entry.remaining, 0)
  }

  clear(): void {
    this.#queue = []
  }
}

function matches(spec: FaultSpec, method: string, path: string): boolean {
  const match = spec.match
  if (!match) return true
  if (match.method !== undefined && match.method.toUpperCase() !== method.toUpperCase()) return false
  if (match.path !== undefined) {
    if (typeof match.path === 'string') return match.path === path
    match.path.lastIndex = 0
    return match.path.test(path)
  }
  return true
}

/** The synthetic response a fault asks for, or `undefined` when it has neither status nor body. */
export function syntheticResponse(spec: FaultSpec): FakeResponse | undefined {
  if (spec.status === undefined && spec.body === undefined) return undefined
  const status = spec.status ?? 500
  const body = spec.body
  if (body === undefined)
    return status >= 400 ? errorResponse(status, `Injected fault (HTTP ${status})`) : { status, headers: {}, body: Buffer.alloc(0) }
  if (typeof body === 'string') return { status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: Buffer.from(body) }
  if (Buffer.isBuffer(body)) return { status, headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from(body) }
  return { status, headers: { 'content-type': JSON_CONTENT_TYPE }, body: Buffer.from(JSON.stringify(body)) }
}
