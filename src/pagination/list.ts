import * as z from 'zod'
import { listRequestOptionsSchema, type ListRequestOptions } from '../core/options.ts'
import type { Transport } from '../core/transport.ts'
import { type ArgumentCheck, parseResponse, responseError } from '../core/validate.ts'
import { paginationSchema } from '../schemas/common.ts'
import type { Pagination } from '../schemas/index.ts'
import { Page } from './page.ts'
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
  /** Schema of the whole response, made once per operation by {@link pageSchema}. */
  readonly schema: PageSchema<T, Extra>
  /** Builds the page object. */
  readonly makePage: (data: T[], pagination: Pagination, extra: z.output<z.ZodObject<Extra>>, source: PageSource<Page<T>>) => P
}

/**
 * Runs a list operation: checks the per-call options next to whatever `args` already checked (the
 * params, an id), and when everything is valid builds the operation and sends the first page's
 * request at once. Returns a {@link PagePromise} whose iteration fetches later pages with the same
 * limit, filters and options; each response is validated, and its `pagination.page` must be the
 * page asked for. Invalid input gives a PagePromise that rejects with RequestValidationError
 * (nothing sent).
 * @internal
 */
export function list<T, P extends Page<T>, Extra extends z.ZodRawShape>(
  transport: Transport,
  args: ArgumentCheck,
  rawOptions: ListRequestOptions | undefined,
  build: () => ListOperation<T, P, Extra>,
): PagePromise<T, P> {
  const options = args.check(listRequestOptionsSchema, rawOptions ?? {}, ['options']) as ListRequestOptions
  const invalid = args.error()
  if (invalid !== undefined) return rejected(invalid)
  const op = build()
  const { prefetch, ...requestOptions } = options

  const source: PageSource<P> = {
    prefetch: prefetch ?? 0,
    fetch: async (page, signal) => {
      const callSignal =
        signal === undefined
          ? requestOptions.signal
          : requestOptions.signal === undefined
            ? signal
            : AbortSignal.any([requestOptions.signal, signal])
      const response = await transport.request({
        method: 'GET',
        path: op.path,
        query: { page, limit: op.limit },
        ...(op.body === undefined ? {} : { body: op.body }),
        options: callSignal === undefined ? requestOptions : { ...requestOptions, signal: callSignal },
      })
      const parsed = parseResponse(op.schema, response, transport.redactor)
      if (parsed.pagination.page !== page) {
        throw responseError(
          response,
          [
            {
              path: ['pagination', 'page'],
              code: 'custom',
              message: `Asked for page ${page}, the service answered page ${parsed.pagination.page}`,
            },
          ],
          transport.redactor,
        )
      }
      return op.makePage(parsed.data, parsed.pagination, parsed, source)
    },
  }
  const first = source.fetch(op.page ?? 1)
  return new PagePromise<T, P>(first, source)
}

/** Schema of a list response: `data`, `pagination`, and any extra members. @internal */
export type PageSchema<T, Extra extends z.ZodRawShape> = z.ZodType<{ data: T[]; pagination: Pagination } & z.output<z.ZodObject<Extra>>>

/**
 * Builds the schema of a list response from the schema of one item and of any extra top-level
 * members (messages' `conversation`). Build it once per operation, at module load: zod compiles a
 * schema on first use, and rebuilding it per call costs more than validating a page.
 * @internal
 */
export function pageSchema<T, Extra extends z.ZodRawShape = Record<string, never>>(
  item: z.ZodType<T>,
  extra?: Extra,
): PageSchema<T, Extra> {
  return z.object({ data: z.array(item), pagination: paginationSchema, ...extra }) as unknown as PageSchema<T, Extra>
}

/** `makePage` for lists whose pages hold nothing but `data` and `pagination`. @internal */
export function plainPage<T>(data: T[], pagination: Pagination, _extra: unknown, source: PageSource<Page<T>>): Page<T> {
  return new Page(data, pagination, source)
}

/** A PagePromise that rejects with `error` (bad params): nothing is sent. @internal */
function rejected<T, P extends Page<T>>(error: Error): PagePromise<T, P> {
  const first = Promise.reject(error)
  return new PagePromise<T, P>(first, { prefetch: 0, fetch: () => first })
}
