/**
 * Sends requests to the service: one `/rest/v1` prefix, credentials as JSON body members on every
 * request (GET included), keep-alive pooling over HTTP/1.1. Redirects are never followed
 * (credentials travel in the body). A call is composed of, in order:
 *
 * 1. the client-wide 429 pause (`rate-limit.ts`), shared between processes through the
 *    `rateLimitStore` when there is one: a new attempt waits for it;
 * 2. one attempt (`exchange.ts`): deadline, decoding, size cap, and whether the status is a success;
 * 3. intake ({@link Transport.send}'s `#intake`): what came back is made what the rest of the SDK
 *    reads, its `x-request-id` read once;
 * 4. the observers (`observers.ts`): log and trace, told what happened, deciding nothing;
 * 5. the retry policy (`retry-policy.ts`): retry after a wait, or stop; a 429 extends the pause.
 *
 * It answers with the final response whatever its status (a status that is not success, once
 * retries are done); what the body means is `read-response.ts`'s job.
 */
import { Agent, type Dispatcher } from 'undici'
import type { RateLimitStore } from '../core/options.ts'
import { MAX_RETRY_AFTER_MS } from '../core/retry.ts'
import type { RequestTrace } from '../core/tracing.ts'
import { APIConnectionError, APITimeoutError, APIUserAbortError, ChatServiceError } from '../errors/errors.ts'
import { cancelledError, SDK_CANCELLED } from './cancellation.ts'
import { exchange, type ExchangeOutcome, type HttpMethod, type ReceivedResponse } from './exchange.ts'
import { cleanCause, describeCause, errorCode, TIMEOUT_CODES } from './network-errors.ts'
import { observersOf, type AttemptObserver } from './observers.ts'
import { RateLimitPause } from './rate-limit.ts'
import { decodeBody, pausedError, responseValidationError, statusError, type RequestSummary } from './read-response.ts'
import type { Redactor } from './redact.ts'
import type { ResolvedOptions } from './resolved-options.ts'
import { clientPause, decideRetry, failsEveryTime, isCertificateError, isUnsolicitedContinue, type AttemptFailure } from './retry-policy.ts'
import { waitFor } from './wait.ts'

/** One operation to send; the transport adds credentials, headers, retries and deadlines. */
export interface OutgoingRequest extends RequestSummary {
  readonly method: HttpMethod
  /** JSON body members besides the credentials (filters, update fields). */
  readonly members?: Readonly<Record<string, unknown>> | undefined
  /** Which statuses are success (the operation's rule; default any 2xx). */
  readonly success?: ((status: number) => boolean) | undefined
  /** Members of the response body that hold secrets (the operation's `secretFields`): remembered at intake, before anything reads the response. */
  readonly secretFields?: readonly string[] | undefined
}

/** An attempt's outcome after intake: a response is a {@link ReceivedResponse}; a too-large body keeps its request id. */
export type ReceivedOutcome =
  | { readonly ok: true; readonly response: ReceivedResponse }
  | (Exclude<ExchangeOutcome, { ok: true } | { failure: 'too-large' }> & { readonly ok: false })
  | (Extract<ExchangeOutcome, { failure: 'too-large' }> & { readonly requestId: string | undefined })

/** Any 2xx. */
function isAny2xx(status: number): boolean {
  return status >= 200 && status < 300
}

/** What a {@link Transport} is built from (the client resolves and validates these). */
export interface TransportConfig {
  readonly origin: string
  /** Path every request starts with: any path of the base URL, then `/rest/v1`. */
  readonly prefix: string
  readonly keyId: string
  readonly keySecret: string
  readonly redactor: Redactor
  /** A dispatcher the caller owns; else the transport makes (and closes) its own pool. */
  readonly dispatcher: Dispatcher | undefined
  /** Sockets of the own pool. */
  readonly connections: number
  /** Connect timeout of the own pool, ms. */
  readonly connectTimeout: number
  /** Where the 429 pause is shared with other processes, if anywhere. */
  readonly rateLimitStore?: RateLimitStore | undefined
}

/** Shared by a client and every client derived from it with `withOptions`. */
export class Transport {
  readonly redactor: Redactor
  readonly #config: TransportConfig
  /** The pool (own or the caller's). */
  readonly #dispatcher: Dispatcher
  readonly #dispatch: Dispatcher['dispatch']
  readonly #ownsDispatcher: boolean
  /** `{"keyId":"…","keySecret":"…"`: every body starts so; members follow. */
  readonly #credentials: string
  /** The body of a request with no members, made once. */
  readonly #credentialsOnly: Buffer
  /** Aborted by close(): ends retry waits and refuses new calls. */
  readonly #closing = new AbortController()
  #closed: Promise<void> | undefined
  /** The client-wide pause after a 429 (see {@link Transport.send}). */
  readonly #pause: RateLimitPause

  constructor(config: TransportConfig) {
    this.#config = config
    this.#pause = new RateLimitPause(config.rateLimitStore)
    this.redactor = config.redactor
    this.#ownsDispatcher = config.dispatcher === undefined
    // HTTP/1.1 only: undici 8 negotiates h2 over TLS by default, and its h2 sessions can emit an
    // unhandled 'error' after aborted streams (the process dies); h2 was no faster here than
    // keep-alive HTTP/1.1. undici's connect timeout (10 s) would cut a longer `timeout` short.
    this.#dispatcher =
      config.dispatcher ??
      new Agent({ connections: config.connections, pipelining: 1, allowH2: false, connect: { timeout: config.connectTimeout } })
    this.#dispatch = this.#dispatcher.dispatch.bind(this.#dispatcher)
    this.#credentials = JSON.stringify({ keyId: config.keyId, keySecret: config.keySecret }).slice(0, -1)
    this.#credentialsOnly = Buffer.from(`${this.#credentials}}`)
  }

  /** Path every request starts with: any path of the base URL, then `/rest/v1`. */
  get prefix(): string {
    return this.#config.prefix
  }

  /** Aborted once {@link Transport.close} is called. */
  get closing(): AbortSignal {
    return this.#closing.signal
  }

  /**
   * Refuses new calls and ends retry waits (both reject with ChatServiceError), then releases the
   * own pool once in-flight attempts finish. A caller's dispatcher stays open. Idempotent.
   */
  close(): Promise<void> {
    if (this.#closed === undefined) {
      this.#closing.abort()
      this.#closed = this.#ownsDispatcher ? this.#dispatcher.close().then(() => undefined) : Promise.resolve()
    }
    return this.#closed
  }

  /**
   * Sends `request` until it succeeds or {@link decideRetry} says stop, and resolves with the last
   * response, whatever its status.
   *
   * After a 429, every new attempt of this client (and of clients derived from it) waits until the
   * service's `Retry-After` (else the backoff) has passed, instead of each finding the limit on its
   * own; attempts already in flight go on. With a `rateLimitStore`, a 429 that extends the pause is
   * written to it and the pause also holds what the store says (read at most every maxAgeMs; see
   * `rate-limit.ts`), so a 429 another process met pauses this one. With `rateLimitPause: 'fail'` a call that meets the pause
   * is refused instead. With `totalTimeout`, every attempt and every wait fits in the call's
   * deadline, and a wait that cannot end inside it is not started.
   * @throws APIConnectionError / APITimeoutError when no response came and retries ran out (or the
   * failure would repeat); APITimeoutError when `totalTimeout` runs out (`cause`: the last attempt's
   * error); RateLimitError for a call refused by `rateLimitPause: 'fail'`, or whose waits for the pause would pass 60 s per try; APIUserAbortError;
   * ResponseValidationError for a success body over `maxResponseBytes`; ChatServiceError once the
   * client is closed.
   */
  async send(request: OutgoingRequest, options: ResolvedOptions, closing: AbortSignal, trace?: RequestTrace): Promise<ReceivedResponse> {
    const { signal } = options
    if (closing.aborted) throw closedError()
    if (signal?.aborted === true) throw userAbort(request, this.redactor, signal.reason)
    const body =
      request.members === undefined
        ? this.#credentialsOnly
        : Buffer.from(`${this.#credentials},${JSON.stringify(request.members).slice(1)}`)
    const observer: AttemptObserver = observersOf(request, options.log, this.redactor, trace)
    const deadline = new Deadline(options.totalTimeout)
    /** The error the last attempt that ended stands for: the `cause` if `totalTimeout` runs out. */
    let lastError: ChatServiceError | undefined
    /**
     * What the call may still spend waiting for the client's 429 pause, in ms: one longest
     * `Retry-After` per try. The pause is looked at again after each wait, and a store (or other
     * calls' 429s) could make it longer every time: without a bound, a call would never be sent.
     */
    let pauseBudget = MAX_RETRY_AFTER_MS * (options.maxRetries + 1)

    for (let attempt = 1; ; attempt++) {
      // 1. The client-wide pause: this process's, and the store's (read at most every maxAgeMs, and
      // waited for at most 250 ms; without a store, or between reads, nothing is awaited). Looked
      // at again after a wait: another 429, here or elsewhere, may have made it longer.
      for (;;) {
        const read = this.#pause.refresh(options.log)
        if (read !== undefined) {
          await this.#waitForStore(read.settled, read.waitUntil, deadline, request, options, closing)
          this.#pause.slow(read, options.log)
        }
        const pause = this.#pause.state()
        if (pause === undefined) break
        const paused = pause.remaining
        if (options.rateLimitPause === 'fail') throw pausedError(pause.response, request, paused, this.redactor, pause.fromStore)
        const from = pause.fromStore ? ' seen by another process (rateLimitStore)' : ''
        if (!deadline.fits(paused)) {
          throw this.#outOfTime(request, deadline, lastError, `the client is paused after a 429${from} for another ${paused} ms`)
        }
        if (paused > pauseBudget) {
          const spent = MAX_RETRY_AFTER_MS * (options.maxRetries + 1) - pauseBudget
          const because = `waiting it out would take the call past ${MAX_RETRY_AFTER_MS} ms of pause per try (maxRetries + 1 tries; ${spent} ms waited already)`
          throw pausedError(pause.response, request, paused, this.redactor, pause.fromStore, because)
        }
        pauseBudget -= paused
        const shared = pause.fromStore ? ', from the rateLimitStore' : ''
        await this.#wait(paused, request, options, closing, `while waiting out the client's 429 pause (${paused} ms${shared})`)
      }
      // 2–3. One attempt, within what is left of the deadline, and its intake.
      const left = deadline.left()
      if (left <= 0) throw this.#outOfTime(request, deadline, lastError, `before attempt ${attempt}`)
      const started = performance.now()
      const outcome = this.#intake(
        request,
        await exchange(this.#dispatch, {
          origin: this.#config.origin,
          path: request.path,
          method: request.method,
          headers: options.requestHeaders,
          body,
          timeout: options.timeout,
          within: left,
          maxResponseBytes: options.maxResponseBytes,
          isSuccess: request.success ?? isAny2xx,
          signal,
        }),
      )
      // 4. The observers.
      observer.attempted(attempt, outcome, performance.now() - started)
      // 5. The retry policy.
      if (outcome.ok && outcome.response.success) return outcome.response
      if (!outcome.ok && outcome.failure === 'timeout' && outcome.cut) {
        throw this.#outOfTime(request, deadline, lastError, `during attempt ${attempt}`)
      }
      // An abort, and a success body over the cap, end the call whatever the retry policy says.
      if (!outcome.ok && (outcome.failure === 'aborted' || outcome.failure === 'too-large')) {
        throw this.#failureError(outcome, request, options)
      }
      const failure: AttemptFailure = outcome.ok
        ? { kind: 'status', status: outcome.response.status, headers: outcome.response.headers }
        : { kind: 'network', error: outcome.failure === 'network' ? outcome.error : undefined }
      const decision = decideRetry(failure, attempt, options.maxRetries)
      const pause = clientPause(failure, decision, attempt)
      if (pause !== undefined && outcome.ok) this.#pause.extend(pause, outcome.response, options.log)
      if (!decision.retry) {
        if (decision.reason === 'wait-too-long') observer.waitTooLong()
        if (outcome.ok) return outcome.response
        throw this.#failureError(outcome, request, options)
      }
      lastError = outcome.ok
        ? statusError(outcome.response, decodeBody(outcome.response), request, this.redactor)
        : this.#failureError(outcome, request, options)
      if (!deadline.fits(decision.delayMs)) {
        throw this.#outOfTime(request, deadline, lastError, `the wait of ${decision.delayMs} ms before retry ${attempt} would end after it`)
      }
      observer.retrying(attempt, outcome, decision.delayMs, options.maxRetries)
      await this.#wait(decision.delayMs, request, options, closing, `while waiting ${decision.delayMs} ms to retry`)
    }
  }

  /** When the client's 429 pause ends (the store's last value included), or `undefined` when it is not paused. */
  get rateLimitedUntil(): number | undefined {
    return this.#pause.until()
  }

  /** The APITimeoutError of a call whose `totalTimeout` ran out (or would, `when`). */
  #outOfTime(request: OutgoingRequest, deadline: Deadline, lastError: ChatServiceError | undefined, when: string): APITimeoutError {
    const method = request.method
    const path = this.redactor.redact(request.path)
    const last = lastError === undefined ? '' : `; the last attempt: ${lastError.message}`
    return new APITimeoutError({
      method,
      path,
      message: `Request timed out: totalTimeout (${deadline.total} ms) ran out: ${when}: ${method} ${path}${last}`,
      cause: lastError,
    })
  }

  /**
   * What came back is made what the rest of the SDK reads, and safe to show: the secrets its body
   * carries (a new chat token, also from a body that does not parse) are remembered first, then
   * every header name and value is scrubbed, so that the request id (read once, here), errors,
   * logs, traces and `response.headers` never show a secret the server echoed there.
   */
  #intake(request: OutgoingRequest, outcome: ExchangeOutcome): ReceivedOutcome {
    if (outcome.ok) {
      const { response } = outcome
      if (request.secretFields !== undefined) this.redactor.rememberSecretsIn(decodeBody(response), request.secretFields)
      const headers = this.redactor.redactHeaders(response.headers)
      return { ok: true, response: { ...response, headers, requestId: headers['x-request-id'] } }
    }
    if (outcome.failure !== 'too-large') return outcome
    const headers = this.redactor.redactHeaders(outcome.headers)
    return { ...outcome, headers, requestId: headers['x-request-id'] }
  }

  /**
   * Waits `ms`, or until `settled` (if given) resolves, whichever comes first (`during` says what
   * for, in the error of an abort). The call's signal ends it with APIUserAbortError (or, when the
   * SDK cancelled it, the cancellation); closing the client ends it with ChatServiceError.
   */
  async #wait(
    ms: number,
    request: OutgoingRequest,
    options: ResolvedOptions,
    closing: AbortSignal,
    during: string,
    settled?: Promise<void>,
  ): Promise<void> {
    const signal = options.signal === undefined ? closing : AbortSignal.any([options.signal, closing])
    try {
      await waitFor(settled, ms, signal)
    } catch {
      if (options.signal?.aborted === true) throw aborted(options.signal.reason, request, this.redactor, during)
      throw closedError()
    }
  }

  /**
   * Waits for a `rateLimitStore.get()` to answer, until `waitUntil` (ms since the epoch) at most,
   * and never past the call's deadline.
   */
  async #waitForStore(
    settled: Promise<void>,
    waitUntil: number,
    deadline: Deadline,
    request: OutgoingRequest,
    options: ResolvedOptions,
    closing: AbortSignal,
  ): Promise<void> {
    const ms = Math.min(waitUntil - Date.now(), deadline.left())
    if (ms > 0) await this.#wait(ms, request, options, closing, 'while reading the rateLimitStore', settled)
  }

  /** The error a failed attempt stands for, thrown when it is not retried. */
  #failureError(outcome: Exclude<ReceivedOutcome, { ok: true }>, request: OutgoingRequest, options: ResolvedOptions): ChatServiceError {
    const method = request.method
    const path = this.redactor.redact(request.path)
    switch (outcome.failure) {
      case 'aborted':
        return aborted(outcome.reason, request, this.redactor, undefined)
      case 'timeout':
        return new APITimeoutError({
          method,
          path,
          message: outcome.sent
            ? `Request timed out after ${options.timeout} ms: ${method} ${path}`
            : `Request timed out after ${options.timeout} ms waiting for a connection (the request was not sent: every connection of the pool was busy, or connecting took that long): ${method} ${path}`,
        })
      case 'too-large': {
        const issue = {
          path: [],
          code: 'too_big',
          message: `Response body exceeds maxResponseBytes (${options.maxResponseBytes} bytes, after decoding); it was cut off`,
        }
        return responseValidationError(outcome, request, [issue], this.redactor, undefined)
      }
      case 'network': {
        const cause = cleanCause(outcome.error, this.redactor)
        const detail = this.redactor.redact(describeCause(outcome.error))
        if (TIMEOUT_CODES.has(errorCode(outcome.error))) {
          return new APITimeoutError({ method, path, message: `Request timed out: ${method} ${path}: ${detail}`, cause })
        }
        const hint = isCertificateError(outcome.error)
          ? ". The service's TLS certificate was refused and would be on every attempt, so it was not retried. If the service uses a private CA, give it to Node with NODE_EXTRA_CA_CERTS=/path/to/ca.pem, or pass a dispatcher: new Agent({ connect: { ca } })"
          : isUnsolicitedContinue(outcome.error)
            ? ". The service answered with a '100 Continue' it was not asked for (the SDK never sends 'Expect: 100-continue') before its response, and undici, the SDK's HTTP client, refuses that response and closes the connection. The request reached the service and may have been processed; it was not retried, since every attempt would fail the same way. The service (or a proxy in front of it) must not send '100 Continue' unasked"
            : ''
        return new APIConnectionError({
          method,
          path,
          message: `Connection error: ${method} ${path}: ${detail}${hint}`,
          cause,
          retryable: !failsEveryTime(outcome.error),
        })
      }
    }
  }
}

/** The caller's abort; its `cause` is the signal's reason; `during` says what the call was waiting for, if anything. */
function userAbort(request: OutgoingRequest, redactor: Redactor, reason: unknown, during?: string): APIUserAbortError {
  const what = during === undefined ? '' : ` ${during}`
  return new APIUserAbortError(`Request aborted by the caller's signal${what}: ${request.method} ${redactor.redact(request.path)}`, {
    cause: reason,
  })
}

/** The caller's abort, or (reason {@link SDK_CANCELLED}) a request the SDK itself no longer needs. */
function aborted(reason: unknown, request: OutgoingRequest, redactor: Redactor, during: string | undefined): ChatServiceError {
  if (reason !== SDK_CANCELLED) return userAbort(request, redactor, reason, during)
  return cancelledError(`${request.method} ${redactor.redact(request.path)}`)
}

/** A call's `totalTimeout`: the time left at any moment, and whether a wait fits in it. */
class Deadline {
  /** The call's `totalTimeout`, ms (`undefined`: none). */
  readonly total: number | undefined
  readonly #at: number

  constructor(total: number | undefined) {
    this.total = total
    this.#at = total === undefined ? Infinity : Date.now() + total
  }

  /** Ms left (Infinity without a deadline). */
  left(): number {
    return this.#at - Date.now()
  }

  /** Whether a wait of `ms` from now ends before the deadline, leaving time for an attempt. */
  fits(ms: number): boolean {
    return Date.now() + ms < this.#at
  }
}

function closedError(): ChatServiceError {
  return new ChatServiceError('This ChatServiceClient is closed: create a new client to send more requests')
}
