/**
 * List operations: declared once with {@link defineList}, run with {@link listPages}, which checks the
 * call's arguments, sends the first page's request at once and returns a {@link PagePromise}
 * whose iteration fetches later pages with the same limit, filters and options.
 */
import * as z from 'zod'
import type { ListEndpoint } from '../endpoints.ts'
import { defineOperation, type Operation } from '../internal/operation.ts'
import type { PageBody, RequestPipeline } from '../internal/pipeline.ts'
import type { ListRequestOptions } from '../core/options.ts'
import type { APIResponse, ResponseValidation, WithResponse } from '../core/response.ts'
import { ChatServiceError, type ResponseValidationError, type ValidationIssue } from '../errors/errors.ts'
import { paginationSchema, type Pagination } from '../schemas/common.ts'
import type { PageSource } from './iterate.ts'
import { pageIssues } from './rules.ts'
import { createPage, type Page } from './page.ts'
import { createPagePromise, type PagePromise } from './page-promise.ts'

/** What a page factory gets besides the body and the response. */
export interface PageContext<P> {
  /** Where the page's later pages come from. */
  readonly source: PageSource<P>
  /** The SDK method that listed it, e.g. `'customerUsers.list'`, for messages. */
  readonly operation: string
  /** The call's `responseValidation`. */
  readonly validation: ResponseValidation
  /** The ResponseValidationError reporting `issues` in this page: its status, headers, request id and body as sent kept, secrets scrubbed. */
  invalid(issues: readonly ValidationIssue[]): ResponseValidationError
  /** `issues` with every known secret scrubbed. */
  scrub(issues: readonly ValidationIssue[]): ValidationIssue[]
  /** Logs at `warn` through the client's logger, secrets scrubbed. */
  warn(message: string, fields: Record<string, unknown>): void
}

/**
 * Makes a list's pages from bodies as the service sent them: {@link createPage}, or the factory of
 * a subclass that reads more of the body (or checks it further: typed metadata).
 */
export type PageFactory<Body extends PageBody, P> = (body: Body, response: APIResponse, context: PageContext<P>) => P

/** A list operation: an {@link Operation} whose response is a page, and the class of its pages. */
export interface ListOperation<Params extends z.ZodType, Body extends PageBody, P> extends Operation<Params, Body> {
  readonly page: PageFactory<Body, P>
}

/**
 * Declares a list operation: `GET` on the endpoint's path, `page` and `limit` in the query string, every other
 * parameter in the JSON body, a response `{ data: [item], pagination, ...extra }`.
 */
export function defineList<Params extends z.ZodType, Item, Extra extends z.ZodRawShape = Record<string, never>, P = Page<Item>>(spec: {
  /** The list endpoint it calls: a row of `ENDPOINTS` (src/endpoints.ts). */
  readonly endpoint: ListEndpoint
  /** The SDK method, when it is not the endpoint's own (see `OperationSpec.name`). */
  readonly name?: string
  readonly params: Params
  readonly item: z.ZodType<Item>
  readonly extra?: Extra
  readonly page?: PageFactory<{ data: Item[]; pagination: Pagination } & z.output<z.ZodObject<Extra>>, P>
}): ListOperation<Params, { data: Item[]; pagination: Pagination } & z.output<z.ZodObject<Extra>>, P> {
  type Body = { data: Item[]; pagination: Pagination } & z.output<z.ZodObject<Extra>>
  // Loose: members the spec does not show are not an error (a page is returned as the service sent it).
  const response = z.looseObject({ data: z.array(spec.item), pagination: paginationSchema, ...spec.extra }) as unknown as z.ZodType<Body>
  const operation = defineOperation({
    endpoint: spec.endpoint,
    ...(spec.name === undefined ? {} : { name: spec.name }),
    params: spec.params,
    query: ['page', 'limit'],
    response,
  })
  return { ...operation, page: spec.page ?? (createPage as unknown as PageFactory<Body, P>) }
}

/**
 * Runs a list operation. Invalid arguments give a PagePromise that rejects with
 * RequestValidationError (nothing is sent).
 */
export function listPages<Params extends z.ZodType, Body extends PageBody, P extends Page<T>, T>(
  pipeline: RequestPipeline,
  operation: ListOperation<Params, Body, P>,
  pathParams: Readonly<Record<string, unknown>>,
  params: unknown,
  options: ListRequestOptions | undefined,
): PagePromise<T, P> {
  let prepared
  try {
    prepared = pipeline.prepareList(operation, pathParams, params, options)
  } catch (error) {
    const refused = pipeline.refuse(operation, error)
    return createPagePromise<T, P>(refused, {
      prefetch: 0,
      fetch: () => refused,
      invalid: () => new ChatServiceError('A call refused before anything was sent has no pages'),
    })
  }
  // What each page came from, for the error that reports it (kept as long as the page is).
  const responses = new WeakMap<P, WithResponse<Body>>()
  const source: PageSource<P> = {
    prefetch: prepared.prefetch,
    fetch: async (page, signal) => {
      const result = await prepared.fetch(page, signal)
      const issues = pageIssues(result.data, { page })
      if (issues.length > 0) throw prepared.invalid(page, result, issues)
      const made = operation.page(result.data, result.response, {
        source,
        operation: operation.name,
        validation: prepared.validation,
        invalid: (found) => prepared.invalid(page, result, found),
        scrub: (found) => prepared.scrub(found),
        warn: (message, fields) => {
          prepared.warn(message, fields)
        },
      })
      responses.set(made, result)
      return made
    },
    invalid: (made, issues) => {
      const result = responses.get(made) ?? { data: { data: made.data, pagination: made.pagination } as Body, response: made.response }
      return prepared.invalid(made.pagination.page, result, issues)
    },
    asSent: (made) => responses.get(made)?.data ?? made,
  }
  return createPagePromise<T, P>(source.fetch(prepared.firstPage), source)
}
