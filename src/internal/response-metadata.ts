/**
 * What `.withResponse()` and `page.response` show of a response ({@link APIResponse}): its status,
 * and its headers and request id scrubbed by the Redactor when they are first read, not on every
 * response (but on arrival in a client that issued tokens: the constructor says why). Scrubbing every header name and value of every response was the largest of the costs
 * 0.3 added to a call (issue 32), and most calls never look at their headers.
 *
 * It reads like the plain object it stands for: `JSON.stringify` and `util.inspect` show `status`,
 * `headers` and `requestId` (scrubbed); the headers as received live in a private field, which
 * neither shows.
 */
import type { inspect } from 'node:util'
import type { APIResponse } from '../core/response.ts'
import { INSPECT_CUSTOM } from './inspect.ts'
import type { Redactor } from './redact.ts'

/** The {@link APIResponse} of a received response. @internal */
export class ResponseMetadata implements APIResponse {
  readonly status: number
  /** As received: never shown. */
  readonly #received: Readonly<Record<string, string>>
  readonly #redactor: Redactor
  #headers: Readonly<Record<string, string>> | undefined
  #requestId: string | undefined
  #requestIdRead = false

  constructor(status: number, received: Readonly<Record<string, string>>, redactor: Redactor) {
    this.status = status
    this.#received = received
    this.#redactor = redactor
    // A client that issued tokens scrubs on arrival, as 0.3 did: read later, after 1,024 newer
    // tokens, the headers could echo one the Redactor has forgotten. The key secret is never
    // forgotten, so a client that issued none (an export, a sync) scrubs only what is shown.
    if (redactor.remembersTokens) this.#headers = redactor.redactHeaders(received)
  }

  /** The headers, every known secret in a name or value replaced by `[REDACTED]` (scrubbed once, on first read). */
  get headers(): Readonly<Record<string, string>> {
    return (this.#headers ??= this.#redactor.redactHeaders(this.#received))
  }

  /** `x-request-id`, scrubbed as in {@link ResponseMetadata.headers} (the same string). */
  get requestId(): string | undefined {
    if (!this.#requestIdRead) {
      if (this.#headers !== undefined) this.#requestId = this.#headers['x-request-id']
      else {
        const id = this.#received['x-request-id']
        this.#requestId = id === undefined ? undefined : this.#redactor.redact(id)
      }
      this.#requestIdRead = true
    }
    return this.#requestId
  }

  /** `{ status, headers, requestId }`, as `JSON.stringify` writes it. */
  toJSON(): APIResponse {
    return { status: this.status, headers: this.headers, requestId: this.requestId }
  }

  /** Shown as the plain object `{ status, headers, requestId }`. */
  [INSPECT_CUSTOM](_depth: number, options: object, show: typeof inspect): string {
    return show(this.toJSON(), options)
  }
}
