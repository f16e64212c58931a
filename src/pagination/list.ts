/**
 * List operations: declared once with {@link defineList}, run with {@link listPages}, which checks the
 * call's arguments, sends the first page's request at once and returns a {@link PagePromise}
 * whose iteration fetches later pages with the same limit, filters and options.
 */
import * as z from 'zod'
import type { ListEndpoint } from '../endpoints.ts'
import { defineOperation, type Operation } from '../internal/operation.ts'
import type { PageBody, PreparedList, RequestPipeline } from '../internal/pipeline.ts'
import type { ListRequestOptions } from '../core/options.ts'
import type { APIResponse, ResponseValidation } from '../core/response.ts'
import { ChatServiceError, UnstableListError, type ResponseValidationError, type ValidationIssue } from '../errors/errors.ts'
import { paginationSchema, type Pagination } from '../schemas/common.ts'
import type { PageSource } from './iterate.ts'
import type { FetchedPage, ScanReport } from './list-scan.ts'
import { pageIssues } from './rules.ts'
import { createPage, madeFromOf, setMadeFrom, type Page } from './page.ts'
import { createPagePromise, type PagePromise } from './page-promise.ts'

/** What a page factory gets besides the body and the response. */
export interface PageContext<P> {
  /** Where the page's later pages come from. */
  readonly source: PageSource<P>
  /** The SDK method that listed it, e.g. `'customerUsers.list'`, for messages. */
  readonly operation: string
  /**
   * Where each item of the body stands in the page as the service sent it, when the body holds
   * only some of them (an iteration yields each item once); `undefined`: the page as sent.
   */
  readonly positions: readonly number[] | undefined
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
  /** Made on the first call (see `OperationSpec.params`), as `item` and `extra`. */
  readonly params: () => Params
  readonly item: () => z.ZodType<Item>
  readonly extra?: () => Extra
  readonly page?: PageFactory<{ data: Item[]; pagination: Pagination } & z.output<z.ZodObject<Extra>>, P>
}): ListOperation<Params, { data: Item[]; pagination: Pagination } & z.output<z.ZodObject<Extra>>, P> {
  type Body = { data: Item[]; pagination: Pagination } & z.output<z.ZodObject<Extra>>
  const operation = defineOperation({
    endpoint: spec.endpoint,
    ...(spec.name === undefined ? {} : { name: spec.name }),
    params: spec.params,
    query: ['page', 'limit'],
    // Loose: members the spec does not show are not an error (a page is returned as the service sent it).
    response: () =>
      z.looseObject({ data: z.array(spec.item()), pagination: paginationSchema(), ...spec.extra?.() }) as unknown as z.ZodType<Body>,
  })
  // Added, not spread: a spread would read (and so make) the operation's schemas now.
  return Object.assign(operation, { page: spec.page ?? (createPage as unknown as PageFactory<Body, P>) })
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
  let prepared: PreparedList<Body>
  try {
    prepared = pipeline.prepareList(operation, pathParams, params, options)
  } catch (error) {
    const refused = pipeline.refuse(operation, error)
    const nothing = (): never => {
      throw new ChatServiceError('A call refused before anything was sent has no pages')
    }
    return createPagePromise<T, P>(refused, {
      prefetch: 0,
      rescan: false,
      fetch: () => refused,
      page: nothing,
      fetchedOf: nothing,
      unstable: nothing,
      repaired: () => undefined,
    })
  }
  const list = prepared
  const source: PageSource<P> = {
    prefetch: list.prefetch,
    rescan: list.rescan,
    fetch: async (page, signal) => {
      const result = await list.fetch(page, signal)
      const fetched: FetchedPage = { body: result.data, response: result.response, invalid: (issues) => list.invalid(page, result, issues) }
      const issues = pageIssues(result.data, { page })
      if (issues.length > 0) throw fetched.invalid(issues)
      return fetched
    },
    page: (fetched, items) => {
      const sent = fetched.body as Body
      const body = items === undefined ? sent : { ...sent, data: items.map((index) => sent.data[index]) }
      const made = operation.page(body, fetched.response, {
        source,
        operation: operation.name,
        validation: list.validation,
        positions: items,
        invalid: (issues) => fetched.invalid(issues),
        scrub: (issues) => list.scrub(issues),
        warn: (message, fields) => {
          list.warn(message, fields)
        },
      })
      // What the page was made from (kept as long as the page is): its later pages iterate from it.
      setMadeFrom(made, fetched)
      return made
    },
    fetchedOf: (made) =>
      madeFromOf(made) ?? {
        body: { data: made.data, pagination: made.pagination },
        response: made.response,
        invalid: (issues) =>
          list.invalid(
            made.pagination.page,
            { data: { data: made.data, pagination: made.pagination } as Body, response: made.response },
            issues,
          ),
      },
    unstable: (report) => unstableList(operation.name, report),
    repaired: (report) => {
      list.warn(`${operation.name}: ${describeRepairs(report)}`, { operation: operation.name, ...report })
    },
  }
  return createPagePromise<T, P>(source.fetch(list.firstPage), source)
}

/** What a listing did to stay exact, in a sentence (for its log line and its error). */
export function describeRepairs(report: ScanReport): string {
  const parts: string[] = []
  if (report.shifts > 0) {
    parts.push(
      `the list moved while it was read (${report.shifts} ${report.shifts === 1 ? 'time' : 'times'}): ${report.rereads} ${report.rereads === 1 ? 'page' : 'pages'} read again so that every item came once`,
    )
  }
  if (report.scans > 1) parts.push('a second scan read the list again')
  if (report.recovered > 0)
    parts.push(`${report.recovered} ${report.recovered === 1 ? 'item' : 'items'} found that a plain reading would have missed`)
  return parts.length === 0 ? 'the list held still' : parts.join('; ')
}

/** The error of a listing whose list kept moving beyond what its repairs may read. */
export function unstableList(operation: string, report: ScanReport): UnstableListError {
  return new UnstableListError(
    `${operation}: the list kept moving while it was read (${report.shifts} shifts; ${report.rereads} pages read again to repair them, ` +
      'the most a listing may): every item yielded so far came once, but the listing cannot go on without risking a gap. Start it again when the list is quieter.',
    { operation, shifts: report.shifts, rereads: report.rereads },
  )
}
