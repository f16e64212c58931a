import { setTimeout as sleepTimer } from 'node:timers/promises'
import { Agent, type Dispatcher } from 'undici'
import { APIConnectionError, APITimeoutError, APIUserAbortError, ChatServiceError, type ResponseValidationError } from '../errors/index.ts'
import { apiErrorFor } from '../errors/from-status.ts'
import { cleanCause, describeCause, errorCode, isRetryableNetworkError, TIMEOUT_CODES } from './network-errors.ts'
import { VERSION } from '../version.ts'
import type { SdkLogger } from './logger.ts'
import type { RequestOptions } from './options.ts'
import { MAX_RETRY_AFTER_MS, backoffDelay, isRetryableStatus, serverRequestedDelay } from './retry.ts'
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
  /** Names of response-body members that are secrets (e.g. `token`), at any depth: every string in them is scrubbed from every later error and log. */
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
/** Most bytes of an error response's body kept (64 KiB, or `maxResponseBytes` if smaller); the rest is dropped. */
const ERROR_BODY_BYTES = 64 * 1024
const timedOut = Symbol('timeout')
/** Network failures that fail the same way every time: thrown at once, never retried. */
const finalFailures = new WeakSet<APIConnectionError>()

interface AttemptResult {
  status: number
  headers: Record<string, string>
  bytes: Buffer
  /** The body was longer than the error-body cap and was cut there. */
  truncated: boolean
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
  /** Aborted by close(): ends retry waits at once. */
  readonly #closing = new AbortController()
  /** The first close()'s promise: every later call waits for the same release. */
  #closed: Promise<void> | undefined

  constructor(config: TransportConfig) {
    this.#config = config
    this.redactor = config.redactor
    this.logger = config.logger
    this.#ownsDispatcher = config.dispatcher === undefined
    // undici's connect timeout (10 s by default) would cut a longer `timeout` short. HTTP/1.1 only:
    // undici 8 negotiates h2 over TLS by default, and its h2 sessions can emit an unhandled 'error'
    // after aborted streams (the process dies); h2 was no faster here than keep-alive HTTP/1.1.
    this.#dispatcher =
      config.dispatcher ??
      new Agent({ connections: config.connections, pipelining: 1, allowH2: false, connect: { timeout: config.timeout } })
    const custom = lowerCaseKeys(config.headers)
    this.#baseHeaders = { 'user-agent': USER_AGENT, ...custom, 'content-type': 'application/json', accept: 'application/json' }
  }

  /**
   * Stops new calls and retry waits (they reject with ChatServiceError) and releases the client's
   * own connection pool once in-flight attempts finish. Idempotent.
   */
  close(): Promise<void> {
    if (this.#closed === undefined) {
      this.#closing.abort()
      this.#closed = this.#ownsDispatcher ? this.#dispatcher.close().then(() => undefined) : Promise.resolve()
    }
    return this.#closed
  }

  /**
   * Sends `spec`, retrying retryable failures, and resolves with the successful response.
   * @throws APIError (or a subclass) for a non-success status; APIConnectionError / APITimeoutError;
   * APIUserAbortError; ResponseValidationError for a success body that is not JSON or is too large;
   * ChatServiceError once the client is closed.
   */
  async request(spec: RequestSpec): Promise<RawResponse> {
    const options = spec.options ?? {}
    const signal = options.signal
    const method = spec.method
    const path = `${this.#config.prefix}${spec.path}${queryString(spec.query)}`
    if (this.#closing.signal.aborted) throw closedError()
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
        const result = await this.#attempt(method, path, headers, body, timeout, signal, isSuccess)
        const response: RawResponse = {
          status: result.status,
          headers: result.headers,
          body: decodeBody(result.bytes, result.truncated),
          method,
          path,
        }
        if (spec.secretFields !== undefined) this.#rememberSecrets(response.body, spec.secretFields)
        this.#logAttempt(method, path, result.status, started, attempt)
        if (isSuccess(result.status)) {
          if (typeof response.body === 'string' || response.body === undefined) {
            const message =
              response.body === undefined
                ? 'Expected a JSON body, received an empty body'
                : 'Expected a JSON body, received text that is not JSON'
            throw responseError(response, [{ path: [], code: 'invalid_type', message }], this.redactor)
          }
          return response
        }
        failure = apiErrorFor(errorView(response, this.redactor))
        if (!isRetryableStatus(result.status)) throw failure
        retryAfter = serverRequestedDelay(result.headers)
      } catch (error) {
        if (!(error instanceof APIConnectionError)) throw error
        this.#logAttempt(method, path, undefined, started, attempt, error)
        if (finalFailures.has(error)) throw error
        failure = error
      }

      if (attempt > maxRetries) throw failure
      if (retryAfter !== undefined && retryAfter > MAX_RETRY_AFTER_MS) {
        this.logger.log(
          'warn',
          `${method} ${path}: the service asked to wait ${retryAfter} ms, over the ${MAX_RETRY_AFTER_MS} ms maximum; not retrying`,
        )
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
        const waitSignal = signal === undefined ? this.#closing.signal : AbortSignal.any([signal, this.#closing.signal])
        await sleepTimer(delay, undefined, { signal: waitSignal })
      } catch {
        if (signal?.aborted) throw userAbort(method, path)
        throw closedError()
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
    isSuccess: (status: number) => boolean,
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
        // undici closes the connection after a GET with a body unless told otherwise, in case the
        // server leaves the body unread. This service reads it (credentials live there) and the pool
        // does not pipeline, so keep-alive is safe, and it halves the cost of a call.
        reset: false,
      })
      const status = response.statusCode
      const responseHeaders = flattenHeaders(response.headers)
      const limit = this.#config.maxResponseBytes
      const success = isSuccess(status)
      const declared = Number(responseHeaders['content-length'])
      if (success && Number.isFinite(declared) && declared > limit) throw this.#tooLarge(status, responseHeaders, method, path, limit)
      // An error response keeps at most 64 KiB of its body: enough to explain, never a memory risk.
      const cap = success ? limit : Math.min(limit, ERROR_BODY_BYTES)
      // A success body over the cap is an error: its bytes are not kept.
      const { bytes, truncated } = await readBody(response.body, cap, !success)
      if (truncated && success) throw this.#tooLarge(status, responseHeaders, method, path, limit)
      return { status, headers: responseHeaders, bytes, truncated }
    } catch (error) {
      if (response !== undefined) discard(response.body)
      if (error instanceof ChatServiceError) throw error
      if (signal?.aborted) throw userAbort(method, path)
      if (controller.signal.reason === timedOut) {
        throw new APITimeoutError({ method, path, message: `Request timed out after ${timeout} ms: ${method} ${path}` })
      }
      const cause = cleanCause(error, this.redactor)
      if (TIMEOUT_CODES.has(errorCode(error))) {
        throw new APITimeoutError({
          method,
          path,
          message: this.redactor.redact(`Request timed out: ${method} ${path}: ${describeCause(error)}`),
          cause,
        })
      }
      const failure = new APIConnectionError({
        method,
        path,
        message: this.redactor.redact(`Connection error: ${method} ${path}: ${describeCause(error)}`),
        cause,
      })
      if (!isRetryableNetworkError(error)) finalFailures.add(failure)
      throw failure
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
  }

  #tooLarge(status: number, headers: Record<string, string>, method: HttpMethod, path: string, limit: number): ResponseValidationError {
    const issue = { path: [], code: 'too_big', message: `Response body exceeds maxResponseBytes (${limit} bytes); it was cut off` }
    return responseError({ status, headers, body: undefined, method, path }, [issue], this.redactor)
  }

  /** Remembers every string inside the members named `fields`, at any depth, as a secret. */
  #rememberSecrets(body: unknown, fields: readonly string[], depth = 0): void {
    if (body === null || typeof body !== 'object' || depth > 8) return
    for (const [key, value] of Object.entries(body)) {
      if (fields.includes(key)) this.#rememberAllStrings(value, 0)
      else this.#rememberSecrets(value, fields, depth + 1)
    }
  }

  #rememberAllStrings(value: unknown, depth: number): void {
    if (typeof value === 'string') this.redactor.addToken(value)
    else if (value !== null && typeof value === 'object' && depth <= 8) {
      for (const item of Object.values(value)) this.#rememberAllStrings(item, depth + 1)
    }
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

/**
 * Reads a response body into one Buffer, at most `cap` bytes. Past the cap it drops the rest of the
 * stream and reports `truncated`, with the first `cap` bytes when `keepPrefix` (an error body worth
 * showing) or none. Rejects with the stream's error (a reset, an abort, a timeout). Event
 * listeners rather than `for await`: cheaper per call.
 */
function readBody(body: Dispatcher.ResponseData['body'], cap: number, keepPrefix: boolean): Promise<{ bytes: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    body.on('data', (chunk: Buffer) => {
      if (size + chunk.length > cap) {
        body.removeAllListeners('data')
        discard(body)
        if (!keepPrefix) {
          resolve({ bytes: Buffer.alloc(0), truncated: true })
          return
        }
        chunks.push(chunk.subarray(0, cap - size))
        resolve({ bytes: Buffer.concat(chunks, cap), truncated: true })
        return
      }
      size += chunk.length
      chunks.push(chunk)
    })
    body.once('end', () => {
      resolve({ bytes: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size), truncated: false })
    })
    body.once('error', reject)
    // A body that closes without 'end' or 'error' (possible with a custom dispatcher) was cut off.
    body.once('close', () => {
      reject(Object.assign(new Error('The response body closed before its end'), { code: 'ECONNRESET' }))
    })
  })
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

function closedError(): ChatServiceError {
  return new ChatServiceError('This ChatServiceClient is closed: create a new client to send more requests')
}

function decodeBody(bytes: Buffer, truncated: boolean): unknown {
  if (bytes.length === 0) return undefined
  const text = bytes.toString('utf8')
  if (truncated) return `${text}… [cut off after ${bytes.length} bytes]`
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
