/**
 * Sends requests to the service: one `/rest/v1` prefix, credentials as JSON body members on every
 * request (GET included), keep-alive pooling over HTTP/1.1, compressed responses decoded,
 * per-attempt deadlines, retries as {@link decideRetry} says, a client-wide pause after a 429,
 * and redacted logs. Redirects are never followed (credentials travel in the body). It answers
 * with the final response whatever its status; what the status means is `response.ts`'s job.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { Agent, interceptors, type Dispatcher } from 'undici'
import { APIConnectionError, APITimeoutError, APIUserAbortError, ChatServiceError } from '../errors/errors.ts'
import { SDK_CANCELLED } from './cancellation.ts'
import { exchange, type ExchangeOutcome, type HttpMethod, type RawResponse } from './exchange.ts'
import type { RequestTrace } from '../core/tracing.ts'
import type { ResolvedOptions } from './resolved-options.ts'
import type { SdkLogger } from './sdk-logger.ts'
import { cleanCause, describeCause, errorCode, TIMEOUT_CODES } from './network-errors.ts'
import type { Redactor } from './redact.ts'
import { responseValidationError, type RequestSummary } from './read-response.ts'
import { clientPause, decideRetry, isCertificateError, type AttemptFailure } from './retry-policy.ts'

/** One operation to send; the transport adds credentials, headers, retries and deadlines. */
export interface OutgoingRequest extends RequestSummary {
  readonly method: HttpMethod
  /** JSON body members besides the credentials (filters, update fields). */
  readonly members?: Readonly<Record<string, unknown>> | undefined
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
}

/** Shared by a client and every client derived from it with `withOptions`. */
export class Transport {
  readonly redactor: Redactor
  readonly #config: TransportConfig
  /** The pool (own or the caller's). */
  readonly #dispatcher: Dispatcher
  /** Its dispatch function behind undici's decompression. */
  readonly #dispatch: Dispatcher['dispatch']
  readonly #ownsDispatcher: boolean
  /** `{"keyId":"…","keySecret":"…"`: every body starts so; members follow. */
  readonly #credentials: string
  /** The body of a request with no members, made once. */
  readonly #credentialsOnly: Buffer
  /** Aborted by close(): ends retry waits and refuses new calls. */
  readonly #closing = new AbortController()
  #closed: Promise<void> | undefined
  /** Until when (ms since the epoch) new attempts wait, after a 429 (see {@link Transport.send}). */
  #pausedUntil = 0

  constructor(config: TransportConfig) {
    this.#config = config
    this.redactor = config.redactor
    this.#ownsDispatcher = config.dispatcher === undefined
    // HTTP/1.1 only: undici 8 negotiates h2 over TLS by default, and its h2 sessions can emit an
    // unhandled 'error' after aborted streams (the process dies); h2 was no faster here than
    // keep-alive HTTP/1.1. undici's connect timeout (10 s) would cut a longer `timeout` short.
    this.#dispatcher =
      config.dispatcher ??
      new Agent({ connections: config.connections, pipelining: 1, allowH2: false, connect: { timeout: config.connectTimeout } })
    // What `dispatcher.compose()` does, without asking a caller's dispatcher to have `compose`.
    this.#dispatch = decompress()(this.#dispatcher.dispatch.bind(this.#dispatcher))
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
   * own; attempts already in flight go on.
   * @throws APIConnectionError / APITimeoutError when no response came and retries ran out (or the
   * failure would repeat); APIUserAbortError; ResponseValidationError for a success body over
   * `maxResponseBytes`; ChatServiceError once the client is closed.
   */
  async send(request: OutgoingRequest, options: ResolvedOptions, closing: AbortSignal, trace?: RequestTrace): Promise<RawResponse> {
    const { signal } = options
    if (closing.aborted) throw closedError()
    if (signal?.aborted === true) throw userAbort(request, this.redactor)
    const body =
      request.members === undefined
        ? this.#credentialsOnly
        : Buffer.from(`${this.#credentials},${JSON.stringify(request.members).slice(1)}`)

    for (let attempt = 1; ; attempt++) {
      const paused = this.#pausedUntil - Date.now()
      if (paused > 0) await this.#wait(paused, request, options, closing, trace)
      const started = options.log.enabled('debug') ? performance.now() : 0
      const outcome = await exchange(this.#dispatch, {
        origin: this.#config.origin,
        path: request.path,
        method: request.method,
        headers: options.requestHeaders,
        body,
        timeout: options.timeout,
        maxResponseBytes: options.maxResponseBytes,
        signal,
      })
      if (trace !== undefined) record(trace, attempt, outcome)
      if (started > 0) this.#logAttempt(request, outcome, started, attempt, options.log)

      if (outcome.ok && outcome.response.status < 300) return outcome.response
      // An abort, and a success body over the cap, end the call whatever the retry policy says.
      if (!outcome.ok && (outcome.failure === 'aborted' || outcome.failure === 'too-large')) {
        throw this.#failureError(outcome, request, options, trace)
      }
      const failure: AttemptFailure = outcome.ok
        ? { kind: 'status', status: outcome.response.status, headers: outcome.response.headers }
        : { kind: 'network', error: outcome.failure === 'network' ? outcome.error : undefined }
      const decision = decideRetry(failure, attempt, options.maxRetries)
      const pause = clientPause(failure, decision, attempt)
      if (pause !== undefined) this.#pausedUntil = Math.max(this.#pausedUntil, Date.now() + pause)
      const path = this.redactor.redact(request.path)
      if (!decision.retry) {
        if (decision.reason === 'wait-too-long') {
          options.log.log('warn', `${request.method} ${path}: the service asked to wait longer than the 60,000 ms maximum; not retrying`)
        }
        if (outcome.ok) return outcome.response
        throw this.#failureError(outcome, request, options, trace)
      }
      options.log.log(
        'info',
        `${request.method} ${path}: ${describeFailure(outcome)}; retrying in ${decision.delayMs} ms (retry ${attempt} of ${options.maxRetries})`,
        { method: request.method, path, attempt, retryDelayMs: decision.delayMs },
      )
      await this.#wait(decision.delayMs, request, options, closing, trace)
    }
  }

  /**
   * Waits `ms`. The call's signal ends it with APIUserAbortError (or, when the SDK cancelled it, the
   * cancellation); closing the client ends it with ChatServiceError.
   */
  async #wait(
    ms: number,
    request: OutgoingRequest,
    options: ResolvedOptions,
    closing: AbortSignal,
    trace: RequestTrace | undefined,
  ): Promise<void> {
    const signal = options.signal === undefined ? closing : AbortSignal.any([options.signal, closing])
    try {
      await sleep(ms, undefined, { signal })
    } catch {
      if (options.signal?.aborted === true) throw aborted(options.signal.reason, request, this.redactor, trace)
      throw closedError()
    }
  }

  /** The error a failed attempt stands for, thrown when it is not retried. */
  #failureError(
    outcome: Exclude<ExchangeOutcome, { ok: true }>,
    request: OutgoingRequest,
    options: ResolvedOptions,
    trace: RequestTrace | undefined,
  ): ChatServiceError {
    const method = request.method
    const path = this.redactor.redact(request.path)
    switch (outcome.failure) {
      case 'aborted':
        return aborted(outcome.reason, request, this.redactor, trace)
      case 'timeout':
        return new APITimeoutError({ method, path, message: `Request timed out after ${options.timeout} ms: ${method} ${path}` })
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
          : ''
        return new APIConnectionError({ method, path, message: `Connection error: ${method} ${path}: ${detail}${hint}`, cause })
      }
    }
  }

  #logAttempt(request: OutgoingRequest, outcome: ExchangeOutcome, started: number, attempt: number, logger: SdkLogger): void {
    const durationMs = Math.round(performance.now() - started)
    const status = outcome.ok ? outcome.response.status : undefined
    const path = this.redactor.redact(request.path)
    logger.log('debug', `${request.method} ${path} → ${status ?? describeFailure(outcome)} in ${durationMs} ms (attempt ${attempt})`, {
      method: request.method,
      path,
      status,
      durationMs,
      attempt,
    })
  }
}

/** Keeps the trace current after each attempt. */
function record(trace: RequestTrace, attempt: number, outcome: ExchangeOutcome): void {
  trace.attempts = attempt
  const status = outcome.ok ? outcome.response.status : outcome.failure === 'too-large' ? outcome.status : undefined
  if (status !== undefined) trace.status = status
  const requestId = outcome.ok ? outcome.response.headers['x-request-id'] : undefined
  if (requestId !== undefined) trace.requestId = requestId
}

function describeFailure(outcome: ExchangeOutcome): string {
  if (outcome.ok) return `HTTP ${outcome.response.status}`
  return outcome.failure === 'network' ? describeCause(outcome.error) : outcome.failure
}

function userAbort(request: OutgoingRequest, redactor: Redactor): APIUserAbortError {
  return new APIUserAbortError(`Request aborted by the caller's signal: ${request.method} ${redactor.redact(request.path)}`)
}

/** The caller's abort, or (reason {@link SDK_CANCELLED}) a request the SDK itself no longer needs: traced as `cancelled`. */
function aborted(reason: unknown, request: OutgoingRequest, redactor: Redactor, trace: RequestTrace | undefined): ChatServiceError {
  if (reason !== SDK_CANCELLED) return userAbort(request, redactor)
  if (trace !== undefined) trace.outcome = 'cancelled'
  return new ChatServiceError(`Request cancelled: the iteration that needed it ended: ${request.method} ${redactor.redact(request.path)}`)
}

function closedError(): ChatServiceError {
  return new ChatServiceError('This ChatServiceClient is closed: create a new client to send more requests')
}

/**
 * undici's decompression (gzip, x-gzip, br, deflate, zstd), error responses included. The cap on
 * the decoded size is applied by the exchange as chunks arrive, so a compression bomb stops at
 * `maxResponseBytes` (zlib stops inflating while its output is not read).
 *
 * undici marks this interceptor experimental and emits a process warning the first time one is
 * made. The SDK chose it knowingly and tests it, so the warning would only alarm your users' logs:
 * it is swallowed while the interceptor is made (synchronously; nothing else can warn meanwhile).
 */
function makeDecompressInterceptor(): Dispatcher.DispatcherComposeInterceptor {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, unbound
  const original = process.emitWarning
  const emitWarning = original.bind(process)
  process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message
    if (!text.includes('DecompressInterceptor is experimental')) Reflect.apply(emitWarning, process, [warning, ...rest])
  }
  try {
    return interceptors.decompress({ skipErrorResponses: false })
  } finally {
    process.emitWarning = original
  }
}

let decompressInterceptor: Dispatcher.DispatcherComposeInterceptor | undefined

/** The one decompress interceptor of the process, made on first use (it holds no per-client state). */
function decompress(): Dispatcher.DispatcherComposeInterceptor {
  return (decompressInterceptor ??= makeDecompressInterceptor())
}
