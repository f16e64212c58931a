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
  /** Attempt number `attempt` (1-based) ended with `outcome` after `durationMs`. */
  attempted(attempt: number, outcome: ReceivedOutcome, durationMs: number): void
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
  // The path as logs show it, made when a line is first written: most calls write none, and the
  // redactor's scan of the path showed in every call's profile.
  let shown: { readonly path: string; readonly where: string } | undefined
  const show = (): { readonly path: string; readonly where: string } => {
    if (shown !== undefined) return shown
    const path = redactor.redact(request.path)
    shown = { path, where: `${request.method} ${path}` }
    return shown
  }
  return {
    attempted(attempt, outcome, durationMs) {
      if (trace !== undefined) {
        trace.attempts = attempt
        const status = outcome.ok ? outcome.response.status : outcome.failure === 'too-large' ? outcome.status : undefined
        if (status !== undefined) trace.status = status
        // Scrubbed here, when a subscriber will see it (the response's headers are as received).
        const requestId = outcome.ok ? outcome.response.headers['x-request-id'] : undefined
        if (requestId !== undefined) trace.requestId = redactor.redact(requestId)
      }
      if (!log.enabled('debug')) return
      const { path, where } = show()
      const status = outcome.ok ? outcome.response.status : undefined
      log.log('debug', `${where} → ${status ?? describeOutcome(outcome)} in ${Math.round(durationMs)} ms (attempt ${attempt})`, {
        method: request.method,
        path,
        status,
        durationMs: Math.round(durationMs),
        attempt,
      })
    },
    retrying(attempt, outcome, delayMs, maxRetries) {
      const { path, where } = show()
      log.log('info', `${where}: ${describeOutcome(outcome)}; retrying in ${delayMs} ms (retry ${attempt} of ${maxRetries})`, {
        method: request.method,
        path,
        attempt,
        retryDelayMs: delayMs,
      })
    },
    waitTooLong() {
      log.log('warn', `${show().where}: the service asked to wait longer than the 60,000 ms maximum; not retrying`)
    },
  }
}

/** `HTTP 503`, or what went wrong before a response. */
export function describeOutcome(outcome: ReceivedOutcome): string {
  if (outcome.ok) return `HTTP ${outcome.response.status}`
  return outcome.failure === 'network' ? describeCause(outcome.error) : outcome.failure
}
