import type { WithResponse } from './response.ts'

/**
 * Makes an {@link APIPromise} of a call's `{ data, response }`. Internal: the class's constructor is
 * private, so that nothing but the SDK's pipeline makes one (see `src/internal/README.md`).
 */
export let createAPIPromise: <T>(response: Promise<WithResponse<T>>) => APIPromise<T>

/**
 * What every method that returns one result gives back: a promise of the result (`await` it as
 * usual) that can also tell you about the response it came from.
 *
 * ```ts
 * const user = await client.customerUsers.update(id, { name: 'Ada' })
 * const { data, response } = await client.customerUsers.update(id, { name: 'Ada' }).withResponse()
 * response.status; response.headers['x-request-id']; response.requestId
 * ```
 *
 * The request starts at once. A failure reaches every `await`, `then`, `catch` and
 * `withResponse()`, but an APIPromise nobody has awaited yet does not crash the process with an
 * unhandled rejection while you are busy elsewhere. Errors are the method's own (see its `@throws`).
 */
export class APIPromise<T> implements PromiseLike<T> {
  readonly #response: Promise<WithResponse<T>>
  #data: Promise<T> | undefined

  static {
    createAPIPromise = (response) => new APIPromise(response)
  }

  /** Made by the SDK's methods only. */
  private constructor(response: Promise<WithResponse<T>>) {
    response.catch(() => undefined)
    this.#response = response
  }

  /** Resolves with `{ data, response }`: the result, and the status, headers and request id of its response. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#response
  }

  /** Resolves with the result; rejects with the call's error. */
  then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#result().then(onfulfilled, onrejected)
  }

  /** Handles the call's error. */
  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#result().catch(onrejected)
  }

  /** Runs `onfinally` once the call has settled. */
  finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#result().finally(onfinally)
  }

  /** `'APIPromise'`, for `Object.prototype.toString` and `util.inspect`. */
  get [Symbol.toStringTag](): string {
    return 'APIPromise'
  }

  #result(): Promise<T> {
    return (this.#data ??= this.#response.then((result) => result.data))
  }
}
