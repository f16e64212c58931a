import { ChatServiceError } from '../errors/errors.ts'
import type { APIResponse, WithResponse } from './response.ts'

/**
 * Makes an {@link APIPromise} of a call's `{ data, response }`. Internal: the class's constructor is
 * private, so that nothing but the SDK's pipeline makes one (see `src/internal/README.md`).
 */
export let createAPIPromise: <T>(response: Promise<WithResponse<T>>) => APIPromise<T>

/** The executor of `new Promise(executor)`. */
type Executor<T> = (resolve: (value: T | PromiseLike<T>) => void, reject: (reason?: unknown) => void) => void

/**
 * What every method that returns one result gives back: a `Promise` of the result (`await` it as
 * usual) that can also tell you about the response it came from.
 *
 * ```ts
 * const user = await client.customerUsers.update(id, { name: 'Ada' })
 * const { data, response } = await client.customerUsers.update(id, { name: 'Ada' }).withResponse()
 * response.status; response.headers['x-request-id']; response.requestId
 * ```
 *
 * The request starts at once. It is a real `Promise` (`instanceof Promise`), so it behaves like
 * one: a failure reaches every `await`, `then`, `catch` and `withResponse()`, and a failed call that
 * nothing ever handles is an `unhandledRejection`, as for any promise (Node's default then ends the
 * process), so a forgotten `await` does not hide a failure; ESLint's
 * `@typescript-eslint/no-floating-promises` flags one. `then`, `catch` and `finally` return plain
 * Promises. Errors are the method's own (see its `@throws`).
 */
export class APIPromise<T> extends Promise<T> {
  /** The call's `{ data, response }`; `undefined` for an APIPromise made by a static `Promise` method (`APIPromise.resolve(x)`). */
  readonly #response: Promise<WithResponse<T>> | undefined

  static {
    createAPIPromise = <T>(response: Promise<WithResponse<T>>) => new APIPromise<T>(response)
    // `then`, `catch` and `finally` make plain Promises: only the SDK's methods make an APIPromise. A value,
    // not a getter: `then` reads it on every call, and a getter is a function call each time (issue 32).
    Reflect.defineProperty(APIPromise, Symbol.species, { value: Promise, configurable: true })
  }

  /** Made by the SDK's methods only (and, with an executor, by the static methods `Promise` subclasses inherit). */
  private constructor(source: Promise<WithResponse<T>> | Executor<T>) {
    super(
      typeof source === 'function'
        ? source
        : (resolve, reject) => {
            source.then((result) => {
              resolve(result.data)
            }, reject)
          },
    )
    this.#response = typeof source === 'function' ? undefined : source
  }

  /**
   * Resolves with `{ data, response }`: the result, and the status, headers and request id of its
   * response. The call's error reaches you through the promise this returns (handle it there).
   */
  withResponse(): Promise<{ readonly data: T; readonly response: APIResponse }> {
    const response = this.#response
    if (response === undefined)
      return Promise.reject(new ChatServiceError('This APIPromise was not made by an SDK call: it has no response'))
    // Whoever asks for the response handles the call's failure there: the result promise itself
    // need not be handled too.
    this.then(undefined, ignore)
    return response.then((result) => result)
  }

  /** `'APIPromise'`, for `Object.prototype.toString` and `util.inspect`. */
  override get [Symbol.toStringTag](): string {
    return 'APIPromise'
  }
}

function ignore(): void {
  // A rejection handled elsewhere.
}
