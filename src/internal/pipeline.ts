/**
 * The path of every call, in order:
 *
 * 1. check every argument (`args.ts`): bad input throws RequestValidationError, nothing is sent;
 * 2. build the request from the operation (`operation.ts`): path, query string, body members;
 * 3. trace it (`tracing.ts`) around 4–6;
 * 4. send it, with retries and deadlines (`transport.ts`), which remembers the secrets a response
 *    carries before anything reads it (what shows its headers scrubs them, when it shows them);
 *    and reads the service's deprecation notice on each response (`deprecation.ts`);
 * 5. decode the body; a status that is not success throws its APIError;
 * 6. check the body against the operation's schema (`response.ts`), strictly or with warnings;
 * 7. hand back `{ data, response }`: resources see typed data and response metadata, never the
 *    raw response, the redactor or the logger.
 */
import type * as z from 'zod'
import type { ResponseValidationError, ValidationIssue } from '../errors/errors.ts'
import type { Pagination } from '../schemas/common.ts'
import { createAPIPromise, type APIPromise } from '../core/api-promise.ts'
import type { ListRequestOptions, RequestOptions } from '../core/options.ts'
import type { ResponseValidation, WithResponse } from '../core/response.ts'
import { checkArguments, type ArgumentCheck, type CheckedArguments } from './args.ts'
import { warnDeprecatedOperation, warnDeprecatedOptions } from './deprecated-api.ts'
import type { ReceivedResponse } from './exchange.ts'
import { listRequestOptionsSchema, requestOptionsSchema } from './options-schema.ts'
import { fillPath, splitParams, type Operation } from './operation.ts'
import {
  bodyText,
  checkBody,
  parseBody,
  responseMetadata,
  responseValidationError,
  statusError,
  type ReadContext,
} from './read-response.ts'
import { traced } from './traced.ts'
import { mergeOptions, type ResolvedOptions } from './resolved-options.ts'
import type { OutgoingRequest, Transport } from './transport.ts'
import { queryString } from './url.ts'

/** The body of a list response, as every list operation's schema describes it. */
export interface PageBody {
  readonly data: unknown[]
  readonly pagination: Pagination
}

/** A list call whose arguments passed their checks: fetches any page of it. */
export interface PreparedList<Body extends PageBody> {
  /** The page to start at (`page` param, default 1). */
  readonly firstPage: number
  /** Later pages to keep in flight while iterating. */
  readonly prefetch: number
  /** Whether iterating the whole list scans it a second time (the `rescan` option). */
  readonly rescan: boolean
  /** The `limit` sent with every page, or `undefined` when the service's default applies. */
  readonly limit: number | undefined
  /** Fetches page `page` with the call's limit, filters and options; `signal` cancels it (besides the call's own). */
  fetch(page: number, signal?: AbortSignal): Promise<WithResponse<Body>>
  /**
   * The ResponseValidationError that reports `issues` found in page `page` (`result`, as `fetch`
   * returned it): status, headers, request id and body kept, every known secret scrubbed. The
   * paging rules (pagination/rules.ts) and a page's own checks (typed metadata) decide; this
   * builds the error.
   */
  invalid(page: number, result: WithResponse<Body>, issues: readonly ValidationIssue[]): ResponseValidationError
  /** The call's `responseValidation` (the client's, or the call's own). */
  readonly validation: ResponseValidation
  /** `issues` with every known secret scrubbed from their messages and values. */
  scrub(issues: readonly ValidationIssue[]): ValidationIssue[]
  /** Logs at `warn` through the client's logger, secrets scrubbed. */
  warn(message: string, fields: Record<string, unknown>): void
}

/** Runs operations for one client; see the steps above. */
export class RequestPipeline {
  readonly #transport: Transport
  /** The client's options: every call's options are merged over them. */
  readonly #options: ResolvedOptions
  /** Aborted when the client (or the client it derives from) is closed: refuses calls, ends retry waits. */
  readonly #closing: AbortSignal

  constructor(transport: Transport, options: ResolvedOptions, closing: AbortSignal) {
    this.#transport = transport
    this.#options = options
    this.#closing = closing
  }

  /**
   * Runs a single-result operation.
   * @returns An {@link APIPromise} of the checked body.
   */
  call<Params extends z.ZodType, Result>(
    operation: Operation<Params, Result>,
    pathParams: Readonly<Record<string, unknown>>,
    params: unknown,
    options: RequestOptions | undefined,
  ): APIPromise<Result> {
    return createAPIPromise(this.#call(operation, pathParams, params, options))
  }

  async #call<Params extends z.ZodType, Result>(
    operation: Operation<Params, Result>,
    pathParams: Readonly<Record<string, unknown>>,
    params: unknown,
    options: RequestOptions | undefined,
  ): Promise<WithResponse<Result>> {
    let checked
    try {
      checked = this.#checkCall(operation, pathParams, params, requestOptionsSchema, options)
    } catch (error) {
      return this.refuse(operation, error)
    }
    const [ids, valid, callOptions] = checked
    this.#deprecations(operation.name, callOptions)
    const { query, members } = splitParams(valid, operation.query)
    const request: OutgoingRequest = {
      operation: operation.name,
      method: operation.method,
      path: `${this.#transport.prefix}${fillPath(operation.path, ids)}${queryString(query)}`,
      members,
      success: operation.success,
      secretFields: operation.secretFields,
    }
    const schema = typeof operation.response === 'function' ? operation.response(valid as z.output<Params>) : operation.response
    const merged = callOptions === undefined ? this.#options : mergeOptions(this.#options, callOptions)
    return this.#send(request, merged, operation, (raw, body, text, validation) =>
      checkBody(raw, body, text, request, schema, this.#readContext(validation, operation)),
    )
  }

  /**
   * Checks the arguments of a list call and returns what fetches its pages.
   * @throws RequestValidationError listing every issue (nothing is sent).
   */
  prepareList<Params extends z.ZodType, Body extends PageBody>(
    operation: Operation<Params, Body>,
    pathParams: Readonly<Record<string, unknown>>,
    params: unknown,
    options: ListRequestOptions | undefined,
  ): PreparedList<Body> {
    const [ids, valid, listOptions] = this.#checkCall(operation, pathParams, params, listRequestOptionsSchema, options)
    this.#deprecations(operation.name, listOptions)
    const prefetch = listOptions?.prefetch ?? 0
    const rescan = listOptions?.rescan ?? false
    const { query, members } = splitParams(valid, operation.query)
    const path = `${this.#transport.prefix}${fillPath(operation.path, ids)}`
    // The client's options as they are when the call gives none (resolved once per client);
    // mergeOptions ignores `prefetch` and `rescan`, which are not call options.
    const merged = listOptions === undefined ? this.#options : mergeOptions(this.#options, listOptions)
    const schema = operation.response as z.ZodType<Body>
    const firstPage = (query['page'] as number | undefined) ?? 1
    const pageRequest = (page: number): OutgoingRequest => ({
      operation: operation.name,
      method: operation.method,
      path: `${path}${queryString(query, 'page', page)}`,
      members,
      success: operation.success,
      secretFields: operation.secretFields,
      // The first page is the call a person may wait on; later pages are iteration traffic.
      priority: page === firstPage ? undefined : 'batch',
    })
    return {
      firstPage,
      prefetch,
      rescan,
      limit: query['limit'] as number | undefined,
      fetch: (page, signal) => {
        const request = pageRequest(page)
        const pageOptions = signal === undefined ? merged : mergeOptions(merged, { signal: anySignal(merged.signal, signal) })
        return this.#send(request, pageOptions, operation, (raw, body, text, validation) =>
          checkBody(raw, body, text, request, schema, this.#readContext(validation, operation), breaksPaging),
        )
      },
      invalid: (page, result, issues) =>
        responseValidationError(result.response, pageRequest(page), issues, this.#transport.redactor, result.data),
      validation: merged.responseValidation,
      scrub: (issues) => this.#transport.redactor.redactIssues(issues),
      warn: (message, fields) => {
        merged.log.log('warn', message, fields)
      },
    }
  }

  /**
   * Checks a call's arguments (see `args.ts`), scrubbing secrets from the issues.
   * @throws RequestValidationError listing every issue.
   */
  check<const C extends readonly ArgumentCheck[]>(operation: string, ...checks: C): CheckedArguments<C> {
    return checkArguments({ operation, redactor: this.#transport.redactor }, ...checks)
  }

  /**
   * Checks an operation's path parameters, parameters and options together (one error lists every
   * issue). What needs no schema is not given one: the path parameters of an operation without
   * any (`{}`, as resources pass them), and options not given (`undefined` or `null`: the client's apply).
   * @throws RequestValidationError listing every issue.
   */
  #checkCall<O extends z.ZodType>(
    operation: Pick<Operation, 'name' | 'path' | 'pathParams' | 'params'>,
    pathParams: Readonly<Record<string, unknown>>,
    params: unknown,
    optionsSchema: () => O,
    options: unknown,
  ): [ids: Record<string, string>, valid: Record<string, unknown>, options: z.output<O> | undefined] {
    const noPathParams = !operation.path.includes('{') && isEmptyObject(pathParams)
    const noOptions = options === undefined || options === null
    if (noPathParams && noOptions) {
      const [valid] = this.check(operation.name, [operation.params, params])
      return [{}, valid as Record<string, unknown>, undefined]
    }
    if (noPathParams) {
      const [valid, checkedOptions] = this.check(operation.name, [operation.params, params], [optionsSchema(), options, ['options']])
      return [{}, valid as Record<string, unknown>, checkedOptions]
    }
    if (noOptions) {
      const [ids, valid] = this.check(operation.name, [operation.pathParams, pathParams], [operation.params, params])
      return [ids, valid as Record<string, unknown>, undefined]
    }
    const [ids, valid, checkedOptions] = this.check(
      operation.name,
      [operation.pathParams, pathParams],
      [operation.params, params],
      [optionsSchema(), options, ['options']],
    )
    return [ids, valid as Record<string, unknown>, checkedOptions]
  }

  /**
   * Publishes a call refused before anything was sent (its arguments failed their checks) as a
   * traced operation that failed with `error`, and rejects with it.
   */
  refuse(operation: Pick<Operation, 'name' | 'method' | 'path'>, error: unknown): Promise<never> {
    const path = `${this.#transport.prefix}${operation.path}`
    return traced(
      () => ({ operation: operation.name, method: operation.method, path }),
      () => Promise.reject(error instanceof Error ? error : new Error(String(error))),
    )
  }

  /**
   * `value` with every secret this client knows scrubbed (strings, and the strings in arrays and
   * objects): for an error a resource builds from what the service sent, which never sees the redactor.
   */
  scrub<T>(value: T): T {
    return this.#transport.redactor.redactValue(value)
  }

  /** The service and key this pipeline's requests go to and with (`{ baseUrl, keyId }`; never the secret): what a checkpoint records. */
  get service(): { readonly baseUrl: string; readonly keyId: string } {
    return this.#transport.service
  }

  /** The client's paced rate in requests/s (`client.pacedRate`): `undefined` while it is not paced. */
  get pacedRate(): number | undefined {
    return this.#transport.pacedRate
  }

  /**
   * The rate requests of `operation` are paced at, in requests/s: the client's (`client.pacedRate`),
   * or the operation's own pace where that is lower (a limit of its endpoint alone); `undefined`
   * while neither paces them. What a list's `progress.pacedRate` shows.
   */
  pacedRateOf(operation: string): number | undefined {
    return this.#transport.pacedRateOf(operation)
  }

  /** Logs at `warn` for an operation that reports something without failing (a conversation `listAll` skipped). */
  warn(message: string, fields: Record<string, unknown>): void {
    this.#options.log.log('warn', message, fields)
  }

  /** Steps 3–7 of a call. `read` checks a success body. */
  #send<T>(
    request: OutgoingRequest,
    options: ResolvedOptions,
    operation: Pick<Operation, 'success'>,
    read: (raw: ReceivedResponse, body: unknown, text: string | undefined, validation: ResponseValidation) => T,
  ): Promise<WithResponse<T>> {
    const redactor = this.#transport.redactor
    return traced(
      () => ({ operation: request.operation, method: request.method, path: redactor.redact(request.path) }),
      async (trace) => {
        const raw = await this.#transport.send(request, options, this.#closing, trace)
        // The transport has remembered the secrets this body carries; what shows the headers scrubs them.
        const text = bodyText(raw)
        const body = parseBody(raw, text)
        if (!raw.success) throw statusError(raw, body, request, redactor)
        return { data: read(raw, body, text, options.responseValidation), response: responseMetadata(raw, redactor) }
      },
    )
  }

  /** Warns (once per process) about a deprecated operation or call option (deprecated-api.ts; none today). */
  #deprecations(operation: string, callOptions: object | undefined): void {
    warnDeprecatedOperation(operation, this.#options.log)
    warnDeprecatedOptions(callOptions, this.#options.log)
  }

  #readContext(validation: ResponseValidation, operation: Pick<Operation, 'output'>): ReadContext {
    return { redactor: this.#transport.redactor, logger: this.#options.log, validation, output: operation.output }
  }
}

/** Issues that make a page unusable for paging, even under `responseValidation: 'warn'`. */
function breaksPaging(issue: ValidationIssue): boolean {
  const [first] = issue.path
  return first === undefined || first === 'pagination' || (first === 'data' && issue.path.length === 1)
}

/** Whether `value` has no own enumerable keys (the `{}` resources pass for an operation without path parameters). */
function isEmptyObject(value: object): boolean {
  for (const _ in value) return false
  return true
}

function anySignal(a: AbortSignal | undefined, b: AbortSignal): AbortSignal {
  return a === undefined ? b : AbortSignal.any([a, b])
}
