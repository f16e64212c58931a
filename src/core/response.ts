import type { RequestOptions } from './options.ts'

/**
 * What the SDK tells you about the HTTP response behind a result: `.withResponse()` on any call,
 * `page.response` on any page.
 *
 * `headers` and `requestId` are getters that scrub the headers when first read (most calls never
 * read them): `JSON.stringify` and `util.inspect` show all three members, but a spread copy,
 * `Object.keys` and `structuredClone` see `status` only.
 */
export interface APIResponse {
  /** HTTP status, e.g. `200`. */
  readonly status: number
  /**
   * Response headers, lower-case names; repeated headers joined with `, `. A compressed response
   * was decoded: its `content-encoding` and `content-length` (of the compressed bytes) are gone.
   * A secret (the key secret, an issued token) that the server echoes in a name or value shows as
   * `[REDACTED]`.
   */
  readonly headers: Readonly<Record<string, string>>
  /**
   * The `x-request-id` response header when the service sends one, else `undefined`, with any
   * secret echoed in it shown as `[REDACTED]`. Quote it in support tickets.
   */
  readonly requestId: string | undefined
}

/** `{ data, response }`: what `.withResponse()` resolves with (internal name: the public signatures spell it out). */
export type WithResponse<T> = {
  /** The result, as the call itself resolves with it. */
  readonly data: T
  /** Status, headers and request id of the response it came from. */
  readonly response: APIResponse
}

/** How strictly a response is checked against its schema: `RequestOptions.responseValidation`'s values (internal name). */
export type ResponseValidation = NonNullable<RequestOptions['responseValidation']>
