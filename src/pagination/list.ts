/**
 * List operations: declared once with {@link defineList}, run with {@link listPages}, which checks the
 * call's arguments, sends the first page's request at once and returns a {@link PagePromise}
 * whose iteration fetches later pages with the same limit, filters and options.
 */
import * as z from 'zod'
import { defineOperation, type Operation } from '../core/operation.ts'
import type { PageBody, RequestPipeline } from '../core/pipeline.ts'
import type { ListRequestOptions } from '../core/options.ts'
import type { APIResponse } from '../core/response.ts'
import { paginationSchema, type Pagination } from '../schemas/common.ts'
import type { PageSource } from './iterate.ts'
import { Page } from './page.ts'
import { PagePromise } from './page-promise.ts'

/** The class of a list's pages: {@link Page}, or a subclass that reads more of the body. */
export type PageClass<Body extends PageBody, P> = new (body: Body, response: APIResponse, source: PageSource<P>) => P

/** A list operation: an {@link Operation} whose response is a page, and the class of its pages. */
export interface ListOperation<Params extends z.ZodType, Body extends PageBody, P> extends Operation<Params, Body> {
  readonly Page: PageClass<Body, P>
}

/**
 * Declares a list operation: `GET` on `path`, `page` and `limit` in the query string, every other
 * parameter in the JSON body, a response `{ data: [item], pagination, ...extra }`.
 */
export function defineList<Params extends z.ZodType, Item, Extra extends z.ZodRawShape = Record<string, never>, P = Page<Item>>(spec: {
  readonly name: string
  readonly path: string
  readonly params: Params
  readonly item: z.ZodType<Item>
  readonly extra?: Extra
  /** What a page's body is returned as; see `OperationSpec.output`. */
  readonly output?: 'as-sent' | 'parsed'
  readonly Page?: PageClass<{ data: Item[]; pagination: Pagination } & z.output<z.ZodObject<Extra>>, P>
}): ListOperation<Params, { data: Item[]; pagination: Pagination } & z.output<z.ZodObject<Extra>>, P> {
  type Body = { data: Item[]; pagination: Pagination } & z.output<z.ZodObject<Extra>>
  // Loose: when a page is returned as the schema's output (typed metadata), members it does not know stay.
  const response = z.looseObject({ data: z.array(spec.item), pagination: paginationSchema, ...spec.extra }) as unknown as z.ZodType<Body>
  const operation = defineOperation({
    name: spec.name,
    method: 'GET',
    path: spec.path,
    params: spec.params,
    query: ['page', 'limit'],
    response,
    items: spec.item,
    ...(spec.output === undefined ? {} : { output: spec.output }),
  })
  return { ...operation, Page: spec.Page ?? (Page as unknown as PageClass<Body, P>) }
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
    return PagePromise.reject(pipeline.refuse(operation, error))
  }
  const source: PageSource<P> = {
    prefetch: prepared.prefetch,
    fetch: async (page, signal) => {
      const { data, response } = await prepared.fetch(page, signal)
      return new operation.Page(data, response, source)
    },
  }
  return new PagePromise<T, P>(source.fetch(prepared.firstPage), source)
}
