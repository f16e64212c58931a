import { setTimeout as sleepTimer } from 'node:timers/promises'
import { Agent, type Dispatcher } from 'undici'
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  ChatServiceError,
  type ResponseValidationError,
  apiErrorFor,
} from '../errors/index.ts'
import { VERSION } from '../version.ts'
import type { SdkLogger } from './logger.ts'
import type { RequestOptions } from './options.ts'
import { RETRYABLE_STATUSES, MAX_RETRY_AFTER_MS, backoffDelay, serverRequestedDelay } from './retry.ts'
import type { Redactor } from './redact.ts'
import { queryString } from './url.ts'
import { errorView, responseError } from './validate.ts'

/** HTTP methods the service's operations use. */
export type HttpMethod = 'GET' | 'POST' | 'PUT'

/** One operation to send: the transport adds prefix, credentials, headers, retries and timeouts. */
export interface RequestSpec {
  readonly method: HttpMethod
  /** Path below the `/rest/v1` prefix, segments already percent-encoded, e.g. `/agents`. */
  readonly path: string
  /** Query string entries; `undefined` values are left out. */
  readonly query?: Readonly<Record<string, string | number | undefined>>
  /** JSON body members besides the credentials. */
  readonly body?: Readonly<Record<string, unknown>>
  /** Validated per-call options. */
  readonly options?: RequestOptions | undefined
  /** Which statuses count as success (default: any 2xx). Token issuance accepts only 200. */
  readonly isSuccess?: (status: number) => boolean
  /** Top-level string members of the response body that are secrets (e.g. `token`): scrubbed from every error and log from then on. */
  readonly secretFields?: readonly string[]
}

/** A successful response: status, headers and the parsed JSON body, with what was asked. */
export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** Parsed JSON, else the text; `undefined` when empty. */
  readonly body: unknown
  readonly method: HttpMethod
  /** Request path with query string, as sent. */
  readonly path: string
}

/** What a {@link Transport} is built from (the client resolves and validates these). */
export interface TransportConfig {
  readonly origin: string
  readonly prefix: string
  readonly keyId: string
  readonly keySecret: string
  readonly timeout: number
  readonly maxRetries: number
  readonly headers: Readonly<Record<string, string>>
  readonly connections: number
  readonly maxResponseBytes: number
  readonly dispatcher: Dispatcher | undefined
  readonly redactor: Redactor
  readonly logger: SdkLogger
}

const USER_AGENT = `chat-service-sdk/${VERSION} node/${process.versions.node}`
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'])
const timedOut = Symbol('timeout')

interface AttemptResult {
  status: number
  headers: Record<string, string>
  bytes: Buffer
}

/**
 * Sends requests to the service over undici: one `/rest/v1` prefix, credentials as JSON body
 * members on every request (GET included), keep-alive pooling, per-attempt timeouts, retries with
 * backoff, a response size cap, and redacted logs. Redirects are never followed.
 * @internal
 */
export class Transport {
  readonly redactor: Redactor
  readonly logger: SdkLogger
  readonly #config: TransportConfig
  readonly #dispatcher: Dispatcher
  readonly #ownsDispatcher: boolean
  readonly #baseHeaders: Record<string, string>
  #closed = false

  constructor(config: TransportConfig) {
    this.#config = config
    this.redactor = config.redactor
    this.logger = config.logger
    this.#ownsDispatcher = config.dispatcher === undefined
    this.#dispatcher = config.dispatcher ?? new Agent({ connections: config.connections, pipelining: 1 })
    this.#baseHeaders = {
      ...lowerCaseKeys(config.headers),
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': lowerCaseKeys(config.headers)['user-agent'] ?? USER_AGENT,
    }
  }

  /** Whether {@link close} has been called. */
  get closed(): boolean {
    return this.#closed
  }

  /** Releases the client's own connection pool (after in-flight requests finish). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    if (this.#ownsDispatcher) await this.#dispatcher.close()
  }

  /**
   * Sends `spec`, retrying retryable failures, and resolves with the successful response.
   * @throws APIError (or a subclass) for a non-success status; APIConnectionError / APITimeoutError;
   * APIUserAbortError; ResponseValidationError for a body that is not JSON or is too large.
   */
  async request(spec: RequestSpec): Promise<RawResponse> {
    if (this.#closed) throw new ChatServiceError('This ChatServiceClient is closed: create a new client to send more requests')
    const options = spec.options ?? {}
    const signal = options.signal
    const method = spec.method
    const path = `${this.#config.prefix}${spec.path}${queryString(spec.query)}`
    if (signal?.aborted) throw userAbort(method, path)

    const body = Buffer.from(JSON.stringify({ keyId: this.#config.keyId, keySecret: this.#config.keySecret, ...spec.body }))
    const headers = options.headers === undefined ? this.#baseHeaders : { ...this.#baseHeaders, ...lowerCaseKeys(options.headers) }
    const timeout = options.timeout ?? this.#config.timeout
    const maxRetries = options.maxRetries ?? this.#config.maxRetries
    const isSuccess = spec.isSuccess ?? isSuccess2xx

    for (let attempt = 1; ; attempt++) {
      const started = performance.now()
      let failure: ChatServiceError
      let retryAfter: number | undefined
      try {
        const result = await this.#attempt(method, path, headers, body, timeout, signal)
        const response: RawResponse = { status: result.status, headers: result.headers, body: decodeBody(result.bytes), method, path }
        if (spec.secretFields !== undefined) this.#rememberSecrets(response.body, spec.secretFields)
        this.#logAttempt(method, path, result.status, started, attempt)
        if (isSuccess(result.status)) {
          if (typeof response.body === 'string' || response.body === undefined) {
            const message = response.body === undefined ? 'Expected a JSON body, received an empty body' : 'Expected a JSON body, received text that is not JSON'
            throw responseError(response, [{ path: [], code: 'invalid_type', message }], this.redactor)
          }
          return response
        }
        failure = apiErrorFor(errorView(response, this.redactor))
        if (!RETRYABLE_STATUSES.has(result.status)) throw failure
        retryAfter = serverRequestedDelay(result.headers)
      } catch (error) {
        if (!(error instanceof APIConnectionError)) throw error
        this.#logAttempt(method, path, undefined, started, attempt, error)
        failure = error
      }

      if (attempt > maxRetries) throw failure
      if (retryAfter !== undefined && retryAfter > MAX_RETRY_AFTER_MS) {
        this.logger.log('warn', `${method} ${path}: the service asked to wait ${retryAfter} ms, over the ${MAX_RETRY_AFTER_MS} ms maximum; not retrying`)
        throw failure
      }
      const delay = retryAfter ?? backoffDelay(attempt - 1)
      this.logger.log('info', `${method} ${path}: ${failure.message}; retrying in ${delay} ms (retry ${attempt} of ${maxRetries})`, {
        method,
        path,
        attempt,
        retryDelayMs: delay,
      })
      try {
        await sleepTimer(delay, undefined, signal === undefined ? undefined : { signal })
      } catch {
        throw userAbort(method, path)
      }
    }
  }

  async #attempt(
    method: HttpMethod,
    path: string,
    headers: Record<string, string>,
    body: Buffer,
    timeout: number,
    signal: AbortSignal | undefined,
  ): Promise<AttemptResult> {
    const controller = new AbortController()
    const timer = setTimeout(() => {
      controller.abort(timedOut)
    }, timeout)
    const onAbort = (): void => {
      controller.abort(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    let response: Dispatcher.ResponseData | undefined
    try {
      response = await this.#dispatcher.request({
        origin: this.#config.origin,
        path,
        method,
        headers,
        body,
        signal: controller.signal,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      })
      const responseHeaders = flattenHeaders(response.headers)
      const limit = this.#config.maxResponseBytes
      const declared = Number(responseHeaders['content-length'])
      if (Number.isFinite(declared) && declared > limit) throw this.#tooLarge(response.statusCode, responseHeaders, method, path, limit)
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length
        if (size > limit) throw this.#tooLarge(response.statusCode, responseHeaders, method, path, limit)
        chunks.push(chunk)
      }
      return { status: response.statusCode, headers: responseHeaders, bytes: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) }
    } catch (error) {
      if (response !== undefined) discard(response.body)
      if (error instanceof ChatServiceError) throw error
      if (signal?.aborted) throw userAbort(method, path)
      if (controller.signal.reason === timedOut || TIMEOUT_CODES.has(errorCode(error))) {
        throw new APITimeoutError({ method, path, message: `Request timed out after ${timeout} ms: ${method} ${path}`, cause: this.#scrubCause(error) })
      }
      throw new APIConnectionError({
        method,
        path,
        message: this.redactor.redact(`Connection error: ${method} ${path}: ${describeCause(error)}`),
        cause: this.#scrubCause(error),
      })
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
  }

  #tooLarge(status: number, headers: Record<string, string>, method: HttpMethod, path: string, limit: number): ResponseValidationError {
    const issue = { path: [], code: 'too_big', message: `Response body exceeds maxResponseBytes (${limit} bytes); it was cut off` }
    return responseError({ status, headers, body: undefined, method, path }, [issue], this.redactor)
  }

  #rememberSecrets(body: unknown, fields: readonly string[]): void {
    if (body === null || typeof body !== 'object') return
    for (const field of fields) {
      const value = (body as Record<string, unknown>)[field]
      if (typeof value === 'string') this.redactor.addToken(value)
    }
  }

  #scrubCause(error: unknown): unknown {
    if (error instanceof Error) {
      const scrubbed = this.redactor.redact(error.message)
      if (scrubbed !== error.message) error.message = scrubbed
    }
    return error
  }

  #logAttempt(method: HttpMethod, path: string, status: number | undefined, started: number, attempt: number, error?: Error): void {
    if (!this.logger.enabled('debug')) return
    const durationMs = Math.round(performance.now() - started)
    const outcome = status === undefined ? (error?.name ?? 'error') : String(status)
    this.logger.log('debug', `${method} ${path} → ${outcome} in ${durationMs} ms (attempt ${attempt})`, {
      method,
      path,
      status,
      durationMs,
      attempt,
    })
  }
}

/** Drops a response body we no longer want; its late 'error' (undici's AbortError) is expected, not a fault. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined)
  if (!body.destroyed) body.destroy()
}

function isSuccess2xx(status: number): boolean {
  return status >= 200 && status < 300
}

function userAbort(method: string, path: string): APIUserAbortError {
  return new APIUserAbortError(`Request aborted by the caller's signal: ${method} ${path}`)
}

function decodeBody(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined
  const text = bytes.toString('utf8')
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}

function lowerCaseKeys(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value
  return out
}

function errorCode(error: unknown): string {
  return error !== null && typeof error === 'object' && typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : ''
}

function describeCause(error: unknown): string {
  if (error instanceof Error) {
    const code = errorCode(error)
    return code === '' ? error.message : `${error.message} (${code})`
  }
  return String(error)
}
