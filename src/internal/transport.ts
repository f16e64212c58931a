/**
 * Sends requests to the service: one `/rest/v1` prefix, credentials as JSON body members on every
 * request (GET included), keep-alive pooling over HTTP/1.1. Redirects are never followed
 * (credentials travel in the body). A call is composed of, in order:
 *
 * 1. the rate limit (`rate-limit/limiter.ts`): the client-wide 429 pause, shared between processes
 *    through the `rateLimitStore`, and from the first 429 on the paced rate: a new attempt waits
 *    for both;
 * 2. one attempt (`exchange.ts`): deadline, decoding, size cap, and whether the status is a success;
 * 3. intake ({@link Transport.send}'s `#intake`): the secrets a response carries are remembered
 *    before anything reads it, and the service's deprecation notice, if any, is read
 *    (`deprecation.ts`): from every response, so that one the call then throws for (a wait past
 *    its deadline or over 60 s, a `rateLimitPause: 'fail'`, a starved 429) still tells it;
 * 4. the observers (`observers.ts`): log and trace, told what happened, deciding nothing;
 * 5. what next: a 429 is the rate limit's to judge (under pacing it is sent again when the rate
 *    allows); any other failure the retry policy's (`retry-policy.ts`): retry after a wait, or stop.
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
import { noticeDeprecation } from './deprecation.ts'
import { exchange, type ExchangeOutcome, type HttpMethod, type ReceivedResponse } from './exchange.ts'
import { cleanCause, describeCause, errorCode, TIMEOUT_CODES } from './network-errors.ts'
import { observersOf, type AttemptObserver } from './observers.ts'
import { RateLimits, STARVED_MS, type LimitedCall, type Priority } from './rate-limit/limiter.ts'
import {
  decodeBody,
  notRetriedError,
  ownLimitError,
  responseValidationError,
  starvedError,
  statusError,
  waitTooLongError,
  type RequestSummary,
} from './read-response.ts'
import type { Redactor } from './redact.ts'
import type { ResolvedOptions } from './resolved-options.ts'
import {
  decideRetry,
  failsEveryTime,
  isCertificateError,
  isUnsolicitedContinue,
  serverRequestedDelay,
  type AttemptFailure,
} from './retry-policy.ts'
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
  /** The lane its attempts use while the client paces, unless the call's options say: `'batch'` for iteration traffic; default `'interactive'`. */
  readonly priority?: Priority | undefined
}

/** An attempt's outcome after intake: the exchange's, as it came (see {@link ReceivedResponse} for how its headers are shown). */
export type ReceivedOutcome = ExchangeOutcome

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
  /** Where the 429 pause (and the paced rate) is shared with other processes, if anywhere. */
  readonly rateLimitStore?: RateLimitStore | undefined
  /** How the client spends the rate limit (the `pacing` option). */
  readonly pacing: 'adaptive' | 'off'
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
  /** The 429 pause and the paced rate (see {@link Transport.send}). */
  readonly #limits: RateLimits

  constructor(config: TransportConfig) {
    this.#config = config
    this.#limits = new RateLimits({ store: config.rateLimitStore, pacing: config.pacing, redactor: config.redactor })
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

  /** The service and key requests go to and with: the API root (origin, prefix) and the key id; never the secret. */
  get service(): { readonly baseUrl: string; readonly keyId: string } {
    return { baseUrl: `${this.#config.origin}${this.#config.prefix}`, keyId: this.#config.keyId }
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
   * Sends `request` until it succeeds or the retry policy says stop, and resolves with the last
   * response, whatever its status, but for a response that asked to wait past `MAX_RETRY_AFTER_MS`
   * (thrown, saying so) and a paced call starved of any accepted request (thrown).
   *
   * Each attempt is admitted by the rate limit first (`rate-limit/limiter.ts`: the client-wide 429
   * pause, shared through the `rateLimitStore`, and from the first 429 on the paced rate). A 429 is
   * the rate limit's to judge; every other failure is `retry-policy.ts`'s. With `totalTimeout`,
   * every attempt and every wait fits in the call's deadline, and a wait that cannot end inside it
   * is not started.
   * @throws APIConnectionError / APITimeoutError when no response came and retries ran out (or the
   * failure would repeat); APITimeoutError when `totalTimeout` runs out (`cause`: the last attempt's
   * error); RateLimitError for a call refused by `rateLimitPause: 'fail'`, or whose waits for the pause would pass 60 s per try,
   * or starved under pacing; the status's APIError for a response asking to wait over 60 s; APIUserAbortError;
   * ResponseValidationError for a success body over `maxResponseBytes`; ChatServiceError once the
   * client is closed.
   */
  async send(request: OutgoingRequest, options: ResolvedOptions, closing: AbortSignal, trace?: RequestTrace): Promise<ReceivedResponse> {
    if (closing.aborted) throw closedError()
    if (options.signal?.aborted === true) throw userAbort(request, this.redactor, options.signal.reason)
    const body =
      request.members === undefined
        ? this.#credentialsOnly
        : Buffer.from(`${this.#credentials},${JSON.stringify(request.members).slice(1)}`)
    const observer: AttemptObserver = observersOf(request, options.log, this.redactor, trace)
    const call = new Call(request, options, closing, this.redactor)
    /** Failures other than a paced 429, counted against `maxRetries`. */
    let failures = 0
    for (let attempt = 1; ; attempt++) {
      const admitted = this.#limits.admit(call)
      if (admitted !== undefined) await admitted
      const left = call.left()
      if (left <= 0) throw call.outOfTime(`before attempt ${attempt}`)
      const sentAt = this.#limits.sending(call)
      observer.sending()
      const outcome = this.#intake(request, await this.#exchange(request, options, body, left), options, trace)
      observer.attempted(attempt, outcome)
      if (outcome.ok && outcome.response.status !== 429) this.#limits.accepted(sentAt, call)
      if (outcome.ok && outcome.response.success) return outcome.response
      if (!outcome.ok && outcome.failure === 'timeout' && outcome.cut) throw call.outOfTime(`during attempt ${attempt}`)
      // An abort, and a success body over the cap, end the call whatever the retry policy says.
      if (!outcome.ok && (outcome.failure === 'aborted' || outcome.failure === 'too-large')) {
        throw this.#failureError(outcome, request, options)
      }
      const verdict = outcome.ok && outcome.response.status === 429 ? this.#limits.refused(call, outcome.response, sentAt) : undefined
      if (verdict !== undefined && !verdict.retry) {
        const response = (outcome as Extract<ReceivedOutcome, { ok: true }>).response
        if (verdict.reason === 'wait-too-long') {
          observer.waitTooLong()
          throw waitTooLongError(response, request, serverRequestedDelay(response.headers) ?? 0, this.redactor)
        }
        if (verdict.reason === 'starved') throw starvedError(response, request, STARVED_MS, this.redactor)
        if (verdict.reason === 'own-limit') throw ownLimitError(response, request, verdict.waitMs, this.redactor)
        throw notRetriedError(response, request, this.redactor) // 'no-retries'
      }
      call.lastError = outcome.ok
        ? statusError(outcome.response, decodeBody(outcome.response), request, this.redactor)
        : this.#failureError(outcome, request, options)
      if (verdict !== undefined) {
        if (verdict.waitMs >= call.left())
          throw call.outOfTime(`the wait of ${verdict.waitMs} ms before attempt ${attempt + 1} would end after it`)
        await call.wait(verdict.waitMs, `while waiting ${verdict.waitMs} ms to send a request refused with 429 again`)
        continue
      }
      const delay = this.#retryDelay(outcome, ++failures, call, observer)
      if (delay === undefined) {
        if (outcome.ok) return outcome.response
        throw call.lastError
      }
      observer.retrying(attempt, outcome, delay, options.maxRetries)
      await call.wait(delay, `while waiting ${delay} ms to retry`)
    }
  }

  /** One attempt (`exchange.ts`), within `left` ms of the call's deadline. */
  #exchange(request: OutgoingRequest, options: ResolvedOptions, body: Buffer, left: number): Promise<ExchangeOutcome> {
    return exchange(this.#dispatch, {
      origin: this.#config.origin,
      path: request.path,
      method: request.method,
      body,
      within: left,
      isSuccess: request.success ?? isAny2xx,
      options,
    })
  }

  /**
   * What the retry policy says of failure number `failures` of `call` (not a paced 429): the wait
   * before the next attempt in ms, or `undefined` to stop. A 429 it stops on (`pacing: 'off'`)
   * leaves the client paused.
   * @throws APITimeoutError when the wait would end past `totalTimeout`.
   */
  #retryDelay(
    outcome: Exclude<ReceivedOutcome, { failure: 'aborted' | 'too-large' }>,
    failures: number,
    call: Call,
    observer: AttemptObserver,
  ): number | undefined {
    const failure: AttemptFailure = outcome.ok
      ? { kind: 'status', status: outcome.response.status, headers: outcome.response.headers }
      : { kind: 'network', error: outcome.failure === 'network' ? outcome.error : undefined }
    const decision = decideRetry(failure, failures, call.options.maxRetries)
    if (outcome.ok) this.#limits.decided(outcome.response, decision, failures, call.options.log)
    if (!decision.retry) {
      if (decision.reason === 'wait-too-long') {
        observer.waitTooLong()
        if (outcome.ok)
          throw waitTooLongError(outcome.response, call.request, serverRequestedDelay(outcome.response.headers) ?? 0, this.redactor)
      }
      return undefined
    }
    if (decision.delayMs >= call.left())
      throw call.outOfTime(`the wait of ${decision.delayMs} ms before retry ${failures} would end after it`)
    return decision.delayMs
  }

  /** When the client's 429 pause ends (the store's last value included), or `undefined` when it is not paused. */
  get rateLimitedUntil(): number | undefined {
    return this.#limits.pausedUntil
  }

  /** Requests per second the client allows itself now, or `undefined` while it is not paced. */
  get pacedRate(): number | undefined {
    return this.#limits.pacedRate
  }

  /** Requests per second requests of `operation` may be sent at now: the client's rate, or the operation's own pace where lower (rate-limit/limiter.ts). */
  pacedRateOf(operation: string): number | undefined {
    return this.#limits.pacedRateOf(operation)
  }

  /**
   * What came back, before anything reads it: the secrets its body carries (a new chat token, also
   * from a body that does not parse) are remembered, so that whatever later shows this response
   * or any other (its headers, an error, a log line, a trace) scrubs them. Nothing is copied or
   * scrubbed here: what shows a response scrubs what it shows, when it shows it (read-response.ts).
   */
  #intake(request: OutgoingRequest, outcome: ExchangeOutcome, options: ResolvedOptions, trace: RequestTrace | undefined): ReceivedOutcome {
    if (!outcome.ok) return outcome
    if (request.secretFields !== undefined) this.redactor.rememberSecretsIn(decodeBody(outcome.response), request.secretFields)
    noticeDeprecation(request, outcome.response, this.redactor, options.log, trace)
    return outcome
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

/**
 * One call while it is sent: its deadline (`totalTimeout`), its waits, the errors they end in, and
 * the state the rate limit keeps for it ({@link LimitedCall}).
 */
class Call implements LimitedCall {
  readonly request: OutgoingRequest
  readonly options: ResolvedOptions
  readonly priority: Priority
  readonly #closing: AbortSignal
  readonly #redactor: Redactor
  /** The deadline, ms since the epoch (Infinity without `totalTimeout`). */
  readonly #at: number
  #signal: AbortSignal | undefined
  /** The error the last attempt that ended stands for: the `cause` if `totalTimeout` runs out. */
  lastError: ChatServiceError | undefined
  pauseBudget: number
  refusedSince: number | undefined
  refusals = 0
  refused = false

  constructor(request: OutgoingRequest, options: ResolvedOptions, closing: AbortSignal, redactor: Redactor) {
    this.request = request
    this.options = options
    this.priority = options.priority ?? request.priority ?? 'interactive'
    this.#closing = closing
    this.#redactor = redactor
    this.#at = options.totalTimeout === undefined ? Infinity : Date.now() + options.totalTimeout
    this.pauseBudget = MAX_RETRY_AFTER_MS * (options.maxRetries + 1)
  }

  /** The caller's signal and the client's closing, in one (made when first needed: most calls never wait). */
  get signal(): AbortSignal {
    this.#signal ??= this.options.signal === undefined ? this.#closing : AbortSignal.any([this.options.signal, this.#closing])
    return this.#signal
  }

  /** Ms left before the deadline (Infinity without one, and then no clock is read). */
  left(): number {
    return this.#at === Infinity ? Infinity : this.#at - Date.now()
  }

  /**
   * Waits `ms`, or until `settled` (if given) resolves, whichever comes first (`during` says what
   * for, in the error of an abort). The call's signal ends it with APIUserAbortError (or, when the
   * SDK cancelled it, the cancellation); closing the client ends it with ChatServiceError.
   */
  async wait(ms: number, during: string, settled?: Promise<void>): Promise<void> {
    try {
      await waitFor(settled, ms, this.signal)
    } catch {
      throw this.abandoned(during)
    }
  }

  abandoned(during: string): ChatServiceError {
    const signal = this.options.signal
    if (signal?.aborted === true) return aborted(signal.reason, this.request, this.#redactor, during)
    return closedError()
  }

  /** The APITimeoutError of a call whose `totalTimeout` ran out (or would, `when`). */
  outOfTime(when: string): APITimeoutError {
    const { method } = this.request
    const path = this.#redactor.redact(this.request.path)
    const last = this.lastError === undefined ? '' : `; the last attempt: ${this.lastError.message}`
    return new APITimeoutError({
      method,
      path,
      message: `Request timed out: totalTimeout (${String(this.options.totalTimeout)} ms) ran out: ${when}: ${method} ${path}${last}`,
      cause: this.lastError,
    })
  }
}

function closedError(): ChatServiceError {
  return new ChatServiceError('This ChatServiceClient is closed: create a new client to send more requests')
}
