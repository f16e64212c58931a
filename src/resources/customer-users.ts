import { requestOptionsSchema, type ListRequestOptions, type RequestOptions } from '../core/options.ts'
import type { Transport } from '../core/transport.ts'
import { encodePathSegment } from '../core/url.ts'
import { ArgumentCheck, parseResponse } from '../core/validate.ts'
import { list, pageSchema, plainPage } from '../pagination/list.ts'
import type { PagePromise } from '../pagination/page-promise.ts'
import { idSchema } from '../schemas/common.ts'
import {
  customerUserListParamsSchema,
  customerUserSchema,
  customerUserUpdateParamsSchema,
  updatedCustomerUserSchema,
} from '../schemas/customer-user.ts'
import type { CustomerUser, CustomerUserListParams, CustomerUserUpdateParams, UpdatedCustomerUser } from '../schemas/index.ts'

const customerUserPage = pageSchema(customerUserSchema)
/** The company's customer users (spec, Endpoints 2 and 3). Reach it as `client.customerUsers`. */
export class CustomerUsers {
  readonly #transport: Transport

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * Lists customer users: `GET /rest/v1/customer-users?page&limit` (spec, Endpoint 2). `page` and
   * `limit` travel in the query string; the filters `name`, `email` and `external_id` travel in
   * the JSON body. `external_id` is the recommended lookup.
   * @param params - `page` (default 1), `limit` (1–100, default 20), optional filters.
   * @param options - Per-call `signal`, `timeout` (ms), `maxRetries`, `headers`, `prefetch`.
   * @returns A {@link PagePromise}: await it for one page, `for await` it for every user.
   * @throws RequestValidationError for bad params (nothing sent); AuthenticationError (401),
   * BadRequestError (400), InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError; ChatServiceError
   * once the client is closed.
   */
  list(params: CustomerUserListParams = {}, options?: ListRequestOptions): PagePromise<CustomerUser> {
    const args = new ArgumentCheck('customerUsers.list')
    const valid = args.check(customerUserListParamsSchema, params)
    return list(this.#transport, args, options, () => {
      const { page, limit, ...filters } = valid
      return { path: '/customer-users', page, limit, body: filters, schema: customerUserPage, makePage: plainPage }
    })
  }

  /**
   * Updates a customer user: `PUT /rest/v1/customer-users/:id` (spec, Endpoint 3). Only the fields
   * given are sent. Whether `metadata` is merged or replaced is not shown by the spec: send the
   * full object to keep existing keys.
   * @param id - The internal customer user `id` (not the external id); percent-encoded as one segment.
   * @param params - At least one of `name`, `email`, `metadata` (a plain JSON object).
   * @param options - Per-call `signal`, `timeout` (ms), `maxRetries`, `headers`.
   * @returns The updated user: id, external_id, name, email, metadata, active, updated_at.
   * @throws RequestValidationError (nothing sent); NotFoundError (404: no such user in this
   * company), AuthenticationError (401), BadRequestError (400), InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError; ChatServiceError
   * once the client is closed.
   */
  async update(id: string, params: CustomerUserUpdateParams, options?: RequestOptions): Promise<UpdatedCustomerUser> {
    const args = new ArgumentCheck('customerUsers.update')
    const validId = args.check(idSchema, id, ['id'])
    const body = args.check(customerUserUpdateParamsSchema, params)
    const validOptions = args.check(requestOptionsSchema, options ?? {}, ['options']) as RequestOptions
    args.done()
    const response = await this.#transport.request({
      method: 'PUT',
      path: `/customer-users/${encodePathSegment(validId)}`,
      body,
      options: validOptions,
    })
    return parseResponse(updatedCustomerUserSchema, response, this.#transport.redactor)
  }
}
