import * as z from 'zod'
import type { ListRequestOptions } from '../core/options.ts'
import type { Transport } from '../core/transport.ts'
import { parseResponse, responseError } from '../core/validate.ts'
import { paginationSchema } from '../schemas/common.ts'
import type { Pagination } from '../schemas/index.ts'
import type { Page } from './page.ts'
import { PagePromise } from './page-promise.ts'
import type { PageSource } from './iterate.ts'

/** How one list operation is sent and read. @internal */
export interface ListOperation<T, P extends Page<T>, Extra extends z.ZodRawShape> {
  /** Path below `/rest/v1`, encoded. */
  readonly path: string
  /** Validated `page` (start) and `limit`. */
  readonly page: number | undefined
  readonly limit: number | undefined
  /** JSON body members besides the credentials (the customer-user filters). */
  readonly body?: Readonly<Record<string, unknown>>
  /** Schema of one item of `data`. */
  readonly item: z.ZodType<T>
  /** Schemas of top-level members besides `data` and `pagination` (messages' `conversation`). */
  readonly extra: Extra
  /** Builds the page object. */
  readonly makePage: (data: T[], pagination: Pagination, extra: z.output<z.ZodObject<Extra>>, source: PageSource<Page<T>>) => P
}

/**
 * Runs a list operation with validated params and options: sends the first page's request at once, and
 * returns a {@link PagePromise} whose iteration fetches later pages with the same limit, filters
 * and options. Each response is validated, and its `pagination.page` must be the page asked for.
 * @internal
 */
export function list<T, P extends Page<T>, Extra extends z.ZodRawShape>(
  transport: Transport,
  op: ListOperation<T, P, Extra>,
  options: ListRequestOptions,
): PagePromise<T, P> {
  const schema = z.object({ data: z.array(op.item), pagination: paginationSchema, ...op.extra })
  const { prefetch, ...requestOptions } = options

  const source: PageSource<P> = {
    prefetch: prefetch ?? 0,
    fetch: async (page, signal) => {
      const callSignal = signal === undefined ? requestOptions.signal : requestOptions.signal === undefined ? signal : AbortSignal.any([requestOptions.signal, signal])
      const response = await transport.request({
        method: 'GET',
        path: op.path,
        query: { page, limit: op.limit },
        ...(op.body === undefined ? {} : { body: op.body }),
        options: callSignal === undefined ? requestOptions : { ...requestOptions, signal: callSignal },
      })
      const parsed = parseResponse(schema, response, transport.redactor) as { data: T[]; pagination: Pagination } & z.output<z.ZodObject<Extra>>
      if (parsed.pagination.page !== page) {
        throw responseError(
          response,
          [{ path: ['pagination', 'page'], code: 'custom', message: `Asked for page ${page}, the service answered page ${parsed.pagination.page}` }],
          transport.redactor,
        )
      }
      return op.makePage(parsed.data, parsed.pagination, parsed, source)
    },
  }
  const first = source.fetch(op.page ?? 1)
  return new PagePromise<T, P>(first, source)
}

/** A PagePromise that rejects with `error` (bad params): nothing is sent. @internal */
export function rejected<T, P extends Page<T>>(error: Error): PagePromise<T, P> {
  const first = Promise.reject(error)
  return new PagePromise<T, P>(first, { prefetch: 0, fetch: () => first })
}
