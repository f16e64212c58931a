/**
 * One HTTP exchange (one attempt) over undici's dispatch API: send, decode the body by its
 * `content-encoding` (`decoding.ts`), gather it into one Buffer under a size cap, and give up at a
 * deadline or when the caller's signal fires. Whether the status is a success is decided here,
 * once, by the operation's rule: it sets the body's cap, and everyone after reads `success`.
 *
 * Why not undici's `request()`: it wraps every response in a Readable stream and every attempt
 * in an AbortSignal chain, which profiling showed to be a large part of the SDK's per-call cost.
 * A dispatch handler gets the body chunks directly and aborts through the controller undici hands
 * it, so an attempt costs one handler object and one timer.
 */
import type { Dispatcher } from 'undici'
import { decoderFor, type BodyDecoder } from './decoding.ts'
import { deadlineArmed, deadlineSettled, unrefNodeTimer } from './exit-hold.ts'
import type { ResolvedOptions } from './resolved-options.ts'

/** HTTP methods the service's operations use. */
export type HttpMethod = 'GET' | 'POST' | 'PUT'

/**
 * A response as it came off the wire (decoded from gzip/br/zstd when compression is on), handed on
 * as it is: nothing copies it. Its headers are as the server sent them and may echo a secret:
 * whatever shows them scrubs them first, when it shows them (`ResponseMetadata` for
 * `response.headers` and `requestId`, `errorView` for errors, the observers for traces; see
 * read-response.ts), so a call whose response nobody looks at pays nothing for it.
 */
export interface ReceivedResponse {
  readonly status: number
  /** Whether the status is a success for the operation (see {@link ExchangeRequest.isSuccess}). */
  readonly success: boolean
  /** Lower-case names; repeated headers joined with `, `. As received: never shown without the Redactor. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
  /** An error body longer than its cap was cut there (success bodies over the cap are a failure instead). */
  readonly truncated: boolean
}

/** What one attempt sends, and its limits. */
export interface ExchangeRequest {
  readonly origin: string
  /** Path with prefix and query string, encoded. */
  readonly path: string
  readonly method: HttpMethod
  readonly body: Buffer
  /** The whole attempt, both phases, ends within this many ms from now (what is left of the call's `totalTimeout`). Default: no limit. */
  readonly within?: number | undefined
  /** Which statuses are success for this operation (any 2xx; token issuance: only 200). */
  readonly isSuccess: (status: number) => boolean
  /**
   * The call's options, as resolved, read here as they are (an option that shapes an attempt needs
   * nothing in between):
   *
   * - `requestHeaders`: every header of the request;
   * - `timeout`: deadline in ms of each of the attempt's two phases: the wait for a connection (a
   *   free pooled one, or a new one), then the exchange, from the moment the request is handed to
   *   the connection to the last body byte. The exchange's clock starts when the request is sent,
   *   not when the attempt was queued: under overload a request that waited in the pool must not be
   *   sent with little time left, timed out after the server has it, and sent again (each such retry
   *   is load the server pays twice for);
   * - `maxResponseBytes`: cap on a 2xx body in bytes, after decoding; over it the attempt fails with
   *   `too-large`;
   * - `signal`: the caller's.
   */
  readonly options: ResolvedOptions
}

/** How an attempt ended. Failures are values, not exceptions: the caller decides what they mean. */
export type ExchangeOutcome =
  | { readonly ok: true; readonly response: ReceivedResponse }
  | {
      readonly ok: false
      readonly failure: 'timeout'
      /** Whether the request had been handed to a connection (the server may have it); `false`: it never left the pool's queue. */
      readonly sent: boolean
      /** Ended by {@link ExchangeRequest.within} (the call's `totalTimeout`), not by `timeout`. */
      readonly cut: boolean
    }
  | { readonly ok: false; readonly failure: 'aborted'; readonly reason: unknown }
  | {
      readonly ok: false
      readonly failure: 'too-large'
      readonly status: number
      readonly headers: Readonly<Record<string, string>>
    }
  | { readonly ok: false; readonly failure: 'network'; readonly error: Error }

/** Most bytes of an error response's body kept (64 KiB, or `maxResponseBytes` if smaller): enough to explain, never a memory risk. */
export const ERROR_BODY_BYTES = 64 * 1024

/** Sends one attempt through `dispatch` (a dispatcher's, interceptors included) and settles with its outcome; never rejects. */
export function exchange(dispatch: Dispatcher['dispatch'], request: ExchangeRequest): Promise<ExchangeOutcome> {
  return new Promise((resolve) => {
    const handler = new ExchangeHandler(request, resolve)
    if (handler.settled) return // the signal had fired already: nothing to send
    // A dispatcher (or a caller's interceptor) that throws instead of calling onResponseError.
    try {
      const options: Dispatcher.DispatchOptions & { readonly maxRedirections: 0 } = {
        origin: request.origin,
        path: request.path,
        method: request.method,
        headers: request.options.requestHeaders,
        body: request.body,
        // The attempt's own deadline governs; undici's defaults (300 s) must not cut a longer one short.
        headersTimeout: request.options.timeout,
        bodyTimeout: request.options.timeout,
        // undici closes the connection after a GET with a body unless told otherwise, in case the
        // server leaves the body unread. This service reads it (credentials live there) and the pool
        // does not pipeline, so keep-alive is safe, and it halves the cost of a call.
        reset: false,
        // Never follow a redirect: the credentials travel in the body, and a caller's dispatcher
        // composed with undici's redirect interceptor would re-send them (307/308) to wherever
        // `Location` points. The interceptor reads this per dispatch and then passes the request
        // on untouched; undici's own clients accept 0. A 3xx is then the answer (an APIError).
        maxRedirections: 0,
      }
      dispatch(options, handler)
      handler.queued()
    } catch (error) {
      handler.onResponseError(null, error instanceof Error ? error : new Error(String(error)))
    }
  })
}

class ExchangeHandler implements Dispatcher.DispatchHandler {
  readonly #request: ExchangeRequest
  #resolve: ((outcome: ExchangeOutcome) => void) | undefined
  #controller: Dispatcher.DispatchController | undefined
  /**
   * The running deadline: the wait for a connection's (armed by {@link ExchangeHandler.queued} when
   * `dispatch` returns without having started the request), then the exchange's (armed when it
   * starts). Unset until one of them runs.
   */
  #timer: NodeJS.Timeout | undefined
  /** Whether this attempt is counted in exit-hold.ts (its deadline is a timer of Node's own). */
  #held = false
  /** When the attempt started (`performance.now()`), for a finite `within` (else 0: no clock read). */
  readonly #startedAt: number
  /** The request has been handed to a connection. */
  #sent = false
  /** The running timer is `within`'s, not `timeout`'s. */
  #cut: boolean
  readonly #onAbort: (() => void) | undefined
  #status = 0
  #success = false
  #headers: Record<string, string> = {}
  #cap = 0
  /** Decodes the body when it came with a `content-encoding` the SDK reads. */
  #decoder: BodyDecoder | undefined
  /** The last byte of the (encoded) body has arrived. */
  #ended = false
  #chunks: Buffer[] = []
  #size = 0

  constructor(request: ExchangeRequest, resolve: (outcome: ExchangeOutcome) => void) {
    this.#request = request
    this.#resolve = resolve
    const within = request.within ?? Infinity
    this.#startedAt = within === Infinity ? 0 : performance.now()
    this.#cut = within < request.options.timeout
    const signal = request.options.signal
    if (signal !== undefined) {
      this.#onAbort = () => {
        this.#stop({ ok: false, failure: 'aborted', reason: signal.reason })
      }
      if (signal.aborted) this.#onAbort()
      else signal.addEventListener('abort', this.#onAbort, { once: true })
    }
  }

  /** Whether the attempt has its outcome already. */
  get settled(): boolean {
    return this.#resolve === undefined
  }

  /**
   * `dispatch` has returned: a request it did not start at once (no free connection) waits in the
   * pool's queue, within the deadline of that phase (`timeout`, or less of `within`). One started
   * at once, the usual case with a warm pool, never had that timer to arm and then re-arm (issue
   * 32: each arming is an insert into Node's timer lists).
   */
  queued(): void {
    if (this.#resolve === undefined || this.#sent || this.#timer !== undefined) return
    this.#arm(Math.min(this.#request.options.timeout, this.#request.within ?? Infinity))
  }

  /**
   * Runs the attempt's deadline timer for `ms` from now, unref'd, as Node's http and undici unref
   * theirs: a ref'd one cost about 2,800 instructions a sequential call (Node deletes a duration's
   * timer list when its last ref'd timer is cleared, and the next call builds it again:
   * BENCHMARKS.md, issue 32's sixth and eighth looks). A real request's socket keeps the process
   * alive; for a dispatcher that holds a request with no handle open (msw's `delay('infinite')`, a
   * mock that never answers), exit-hold.ts keeps it alive once the loop has emptied, until the
   * deadline fires, so the call still throws APITimeoutError instead of the process exiting under
   * it. The attempt is counted there once while its deadline is a timer of Node's own, and
   * uncounted when it settles.
   */
  #arm(ms: number): void {
    this.#timer = setTimeout(() => {
      this.#stop({ ok: false, failure: 'timeout', sent: this.#sent, cut: this.#cut })
    }, ms)
    // Counted while its deadline is one of Node's own timers; a test's fake one is not (exit-hold.ts).
    const held = unrefNodeTimer(this.#timer)
    if (held !== this.#held) {
      this.#held = held
      if (held) deadlineArmed()
      else deadlineSettled()
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    // Settled while it waited for a socket (deadline, abort). Throwing here makes undici drop the
    // request before writing it and keep the socket; `controller.abort()` would destroy the socket.
    if (this.#resolve === undefined) throw new Error('The attempt was abandoned before it was sent')
    // A start whose context lists URLs already visited (undici's redirect handler passes them) is a
    // dispatcher that followed a redirect although told not to (one that ignores
    // `maxRedirections`, e.g. built on RedirectHandler.buildDispatch): the next hop is refused
    // before a byte of it (the credentials) is written. (A retry interceptor's second start has
    // no such history: it is the same request again, to the same origin.)
    const history = (context as { history?: unknown } | null | undefined)?.history
    if (Array.isArray(history) && history.length > 0) {
      const error = redirectFollowed(history)
      this.#settle({ ok: false, failure: 'network', error })
      throw error
    }
    this.#controller = controller
    // The request leaves the queue: the exchange gets its whole `timeout` from now (within
    // `within`). Once: a caller's retry interceptor starts it again inside the same deadline.
    if (this.#sent) return
    this.#sent = true
    const within = this.#request.within ?? Infinity
    const left = within === Infinity ? Infinity : within - (performance.now() - this.#startedAt)
    if (this.#timer !== undefined && left >= this.#request.options.timeout && !this.#cut) this.#timer.refresh()
    else {
      clearTimeout(this.#timer)
      this.#cut = left < this.#request.options.timeout
      this.#arm(Math.max(0, Math.min(this.#request.options.timeout, left)))
    }
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: Record<string, string | string[] | undefined>): void {
    if (this.#resolve === undefined || status < 200) return // 1xx: informational, the real response follows
    this.#status = status
    this.#success = this.#request.isSuccess(status)
    this.#headers = flattenHeaders(headers)
    this.#cap = this.#success ? this.#request.options.maxResponseBytes : Math.min(this.#request.options.maxResponseBytes, ERROR_BODY_BYTES)
    if (status !== 204 && status !== 304) {
      try {
        this.#decoder = decoderFor(this.#headers['content-encoding'], {
          data: (chunk) => {
            this.#accept(controller, chunk)
          },
          end: () => {
            if (this.#resolve !== undefined) this.#finish(false)
          },
          error: (error) => {
            // Once the encoded body has all arrived there is no request left to abort.
            if (this.#ended) this.#settle({ ok: false, failure: 'network', error })
            else this.#stop({ ok: false, failure: 'network', error })
          },
          drain: () => {
            controller.resume()
          },
        })
      } catch (error) {
        this.#stop({ ok: false, failure: 'network', error: error as Error })
        return
      }
    }
    if (this.#decoder !== undefined) {
      // Decoded: the coding and the encoded length no longer describe the body handed over.
      const { 'content-encoding': _coding, 'content-length': _length, ...decoded } = this.#headers
      this.#headers = decoded
      return
    }
    const declared = Number(this.#headers['content-length'])
    if (this.#success && declared > this.#cap) this.#tooLarge(controller)
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#resolve === undefined) return
    if (this.#decoder === undefined) this.#accept(controller, chunk)
    else if (!this.#decoder.write(chunk)) controller.pause()
  }

  onResponseEnd(): void {
    this.#ended = true
    if (this.#resolve === undefined) return
    if (this.#decoder === undefined) this.#finish(false)
    else this.#decoder.end() // finishes once the decoders have flushed
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    this.#settle({ ok: false, failure: 'network', error })
  }

  /** Keeps a chunk of the (decoded) body under the cap. */
  #accept(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#resolve === undefined) return
    if (this.#size + chunk.length <= this.#cap) {
      this.#chunks.push(chunk)
      this.#size += chunk.length
      return
    }
    if (this.#success) {
      this.#tooLarge(controller)
      return
    }
    // An error body over its cap: keep what explains it, drop the rest and the connection.
    this.#chunks.push(chunk.subarray(0, this.#cap - this.#size))
    this.#size = this.#cap
    this.#finish(true)
    controller.abort(new Error('Error body over its cap'))
  }

  #finish(truncated: boolean): void {
    const body = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks, this.#size)
    this.#settle({ ok: true, response: { status: this.#status, success: this.#success, headers: this.#headers, body, truncated } })
  }

  /** A success body over the cap: its bytes are not kept, and the rest is not read. */
  #tooLarge(controller: Dispatcher.DispatchController): void {
    this.#settle({ ok: false, failure: 'too-large', status: this.#status, headers: this.#headers })
    controller.abort(new Error('Response body over maxResponseBytes'))
  }

  /** Settles with `outcome` and cancels the request, wherever it is (queued, sending, receiving). */
  #stop(outcome: ExchangeOutcome): void {
    if (this.#resolve === undefined) return
    this.#settle(outcome)
    this.#controller?.abort(new Error(`The attempt was abandoned (${outcome.ok ? 'done' : outcome.failure})`))
  }

  #settle(outcome: ExchangeOutcome): void {
    const resolve = this.#resolve
    if (resolve === undefined) return
    this.#resolve = undefined
    this.#chunks = []
    this.#decoder?.destroy()
    clearTimeout(this.#timer)
    if (this.#held) deadlineSettled()
    if (this.#onAbort !== undefined) this.#request.options.signal?.removeEventListener('abort', this.#onAbort)
    resolve(outcome)
  }
}

/** Code of the error of a redirect the dispatcher followed (see `onRequestStart`); the retry policy never retries it. */
export const REDIRECT_FOLLOWED = 'ERR_CHAT_SERVICE_REDIRECT_FOLLOWED'

/** The error of a redirect a dispatcher followed; `history` is what undici's redirect handler passes (the URLs visited). */
function redirectFollowed(history: readonly unknown[]): Error {
  const from = ` from ${String(history.at(-1))}`
  const error = new Error(
    `redirect not followed: the dispatcher followed a redirect${from} although the SDK asked it not to (maxRedirections: 0); the request to its location was refused before it was sent, because credentials travel in the body`,
  )
  Object.defineProperty(error, 'code', { value: REDIRECT_FOLLOWED, enumerable: true })
  return error
}

/** undici's parsed headers as one string per name; the same object when nothing repeats (the common case). */
function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  let flat = true
  for (const name in headers) {
    if (typeof headers[name] !== 'string') {
      flat = false
      break
    }
  }
  if (flat) return headers as Record<string, string>
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}
