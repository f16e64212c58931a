/**
 * Those who watch a call's attempts without changing them: the log (every attempt at `debug`,
 * every retry at `info`, a wait the SDK will not make at `warn`) and the trace published on the
 * tracing channel (attempts, last status, last request id). The transport tells them what happened;
 * they never decide anything.
 */
import type { RequestTrace } from '../core/tracing.ts'
import { describeCause } from './network-errors.ts'
import type { Redactor } from './redact.ts'
import type { SdkLogger } from './sdk-logger.ts'
import type { ReceivedOutcome } from './transport.ts'

/** What an observer is told. */
export interface AttemptObserver {
  /** An attempt is sent now (its duration is measured from here when a log line will show it). */
  sending(): void
  /** Attempt number `attempt` (1-based) ended with `outcome`. */
  attempted(attempt: number, outcome: ReceivedOutcome): void
  /** The call waits `delayMs`, then makes retry number `attempt` of `maxRetries`. */
  retrying(attempt: number, outcome: ReceivedOutcome, delayMs: number, maxRetries: number): void
  /** The service asked for a wait longer than the SDK makes: the call ends now. */
  waitTooLong(): void
}

/** Who watches one call: its log and, when anyone subscribes to the tracing channel, its trace. */
export function observersOf(
  request: { readonly method: string; readonly path: string },
  log: SdkLogger,
  redactor: Redactor,
  trace: RequestTrace | undefined,
): AttemptObserver {
  return new CallObserver(request, log, redactor, trace)
}

/**
 * One call's observers as one object (one allocation per call, not a closure per method), which does
 * nothing on a call's common path but for what a subscriber or an enabled log level asks for.
 */
class CallObserver implements AttemptObserver {
  readonly #request: { readonly method: string; readonly path: string }
  readonly #log: SdkLogger
  readonly #redactor: Redactor
  readonly #trace: RequestTrace | undefined
  /**
   * The path as logs show it, made when a line is first written: most calls write none, and the
   * redactor's scan of the path showed in every call's profile.
   */
  #shown: { readonly path: string; readonly where: string } | undefined
  /** When the current attempt was sent (`performance.now()`), read only when the debug line will show its duration. */
  #sentAt = 0

  constructor(
    request: { readonly method: string; readonly path: string },
    log: SdkLogger,
    redactor: Redactor,
    trace: RequestTrace | undefined,
  ) {
    this.#request = request
    this.#log = log
    this.#redactor = redactor
    this.#trace = trace
  }

  #show(): { readonly path: string; readonly where: string } {
    if (this.#shown !== undefined) return this.#shown
    const path = this.#redactor.redact(this.#request.path)
    this.#shown = { path, where: `${this.#request.method} ${path}` }
    return this.#shown
  }

  sending(): void {
    if (this.#log.enabled('debug')) this.#sentAt = performance.now()
  }

  attempted(attempt: number, outcome: ReceivedOutcome): void {
    const trace = this.#trace
    if (trace !== undefined) {
      trace.attempts = attempt
      const status = outcome.ok ? outcome.response.status : outcome.failure === 'too-large' ? outcome.status : undefined
      if (status !== undefined) trace.status = status
      // Scrubbed here, when a subscriber will see it (the response's headers are as received).
      const requestId = outcome.ok ? outcome.response.headers['x-request-id'] : undefined
      if (requestId !== undefined) trace.requestId = this.#redactor.redact(requestId)
    }
    if (!this.#log.enabled('debug')) return
    const durationMs = performance.now() - this.#sentAt
    const { path, where } = this.#show()
    const status = outcome.ok ? outcome.response.status : undefined
    this.#log.log('debug', `${where} → ${status ?? describeOutcome(outcome)} in ${Math.round(durationMs)} ms (attempt ${attempt})`, {
      method: this.#request.method,
      path,
      status,
      durationMs: Math.round(durationMs),
      attempt,
    })
  }

  retrying(attempt: number, outcome: ReceivedOutcome, delayMs: number, maxRetries: number): void {
    const { path, where } = this.#show()
    this.#log.log('info', `${where}: ${describeOutcome(outcome)}; retrying in ${delayMs} ms (retry ${attempt} of ${maxRetries})`, {
      method: this.#request.method,
      path,
      attempt,
      retryDelayMs: delayMs,
    })
  }

  waitTooLong(): void {
    this.#log.log('warn', `${this.#show().where}: the service asked to wait longer than the 60,000 ms maximum; not retrying`)
  }
}

/** `HTTP 503`, or what went wrong before a response. */
export function describeOutcome(outcome: ReceivedOutcome): string {
  if (outcome.ok) return `HTTP ${outcome.response.status}`
  return outcome.failure === 'network' ? describeCause(outcome.error) : outcome.failure
}
