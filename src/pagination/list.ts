/**
 * List operations: declared once with {@link defineList}, run with {@link listPages}, which checks the
 * call's arguments, sends the first page's request at once and returns a {@link PagePromise}
 * whose iteration fetches later pages with the same limit, filters and options.
 */
import * as z from 'zod'
import type { ListEndpoint } from '../endpoints.ts'
import { defineOperation, type Operation } from '../internal/operation.ts'
import type { PageBody, RequestPipeline } from '../internal/pipeline.ts'
import { skippedIn, type MemberCheck } from '../internal/read-response.ts'
import type { ListRequestOptions } from '../core/options.ts'
import type { APIResponse, WithResponse } from '../core/response.ts'
import { ChatServiceError } from '../errors/errors.ts'
import { paginationSchema, type Pagination } from '../schemas/common.ts'
import type { PageSource } from './iterate.ts'
import { pageIssues } from './rules.ts'
import { createPage, type Page } from './page.ts'
import { createPagePromise, type PagePromise } from './page-promise.ts'

/** Makes a list's pages: {@link createPage}, or the factory of a subclass that reads more of the body. */
export type PageFactory<Body extends PageBody, P> = (body: Body, response: APIResponse, source: PageSource<P>) => P

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
  /** A member of each item checked by a caller's schema; see `OperationSpec.member`. */
  readonly member?: MemberCheck
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
    ...(spec.member === undefined ? {} : { member: spec.member }),
  })
  return { ...operation, page: spec.page ?? (createPage as unknown as PageFactory<Body, P>) }
}

/**
 * A page's response with the body as the service sent it, items left out of the page (a member
 * check's skips) included: what the paging rules judge and what their errors keep.
 */
function asSent<Body>(result: WithResponse<Body>): WithResponse<Body> {
  const sent = skippedIn(result.data)?.body as Body | undefined
  return sent === undefined ? result : { ...result, data: sent }
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
      const issues = pageIssues(asSent(result).data, { page })
      if (issues.length > 0) throw prepared.invalid(page, asSent(result), issues)
      const made = operation.page(result.data, result.response, source)
      responses.set(made, result)
      return made
    },
    invalid: (made, issues) => {
      const result = responses.get(made) ?? { data: { data: made.data, pagination: made.pagination } as Body, response: made.response }
      return prepared.invalid(made.pagination.page, asSent(result), issues)
    },
    asSent: (made) => {
      const result = responses.get(made)
      return result === undefined ? made : asSent(result).data
    },
  }
  return createPagePromise<T, P>(source.fetch(prepared.firstPage), source)
}
