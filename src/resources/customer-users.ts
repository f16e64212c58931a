import type { APIPromise } from '../core/api-promise.ts'
import { defineOperation } from '../core/operation.ts'
import type { ListRequestOptions, RequestOptions } from '../core/options.ts'
import type { RequestPipeline } from '../core/pipeline.ts'
import { defineList, list } from '../pagination/list.ts'
import type { PagePromise } from '../pagination/page-promise.ts'
import {
  customerUserListParamsSchema,
  customerUserSchema,
  customerUserUpdateParamsSchema,
  updatedCustomerUserSchema,
  type CustomerUser,
  type CustomerUserListParams,
  type CustomerUserUpdateParams,
  type UpdatedCustomerUser,
} from '../schemas/customer-user.ts'

const listCustomerUsers = defineList({
  name: 'customerUsers.list',
  path: '/customer-users',
  params: customerUserListParamsSchema,
  item: customerUserSchema,
})

const updateCustomerUser = defineOperation({
  name: 'customerUsers.update',
  method: 'PUT',
  path: '/customer-users/{id}',
  params: customerUserUpdateParamsSchema,
  response: updatedCustomerUserSchema,
})

/** The company's customer users (spec, Endpoints 2 and 3). Reach it as `client.customerUsers`. */
export class CustomerUsers {
  readonly #pipeline: RequestPipeline

  /** @internal */
  constructor(pipeline: RequestPipeline) {
    this.#pipeline = pipeline
  }

  /**
   * Lists customer users: `GET /rest/v1/customer-users?page&limit` (spec, Endpoint 2). `page` and
   * `limit` travel in the query string; the filters `name`, `email` and `external_id` travel in
   * the JSON body. `external_id` is the recommended lookup.
   * @param params - `page` (default 1), `limit` (1–100, default 20), optional filters.
   * @param options - Per-call `signal`, `timeout` (ms), `maxRetries`, `headers`, `responseValidation`, `prefetch`.
   * @returns A {@link PagePromise}: await it for one page, `for await` it for every user.
   * @throws RequestValidationError for bad params (nothing sent); AuthenticationError (401),
   * BadRequestError (400), InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError; ChatServiceError
   * once the client is closed.
   */
  list(params: CustomerUserListParams = {}, options?: ListRequestOptions): PagePromise<CustomerUser> {
    return list(this.#pipeline, listCustomerUsers, {}, params, options)
  }

  /**
   * Updates a customer user: `PUT /rest/v1/customer-users/:id` (spec, Endpoint 3). Only the fields
   * given are sent. Whether `metadata` is merged or replaced is not shown by the spec: send the
   * full object to keep existing keys.
   * @param id - The internal customer user `id` (not the external id); percent-encoded as one segment.
   * @param params - At least one of `name`, `email`, `metadata` (a plain JSON object).
   * @param options - Per-call `signal`, `timeout` (ms), `maxRetries`, `headers`, `responseValidation`.
   * @returns An {@link APIPromise} of the updated user: id, external_id, name, email, metadata, active, updated_at.
   * @throws RequestValidationError (nothing sent); NotFoundError (404: no such user in this
   * company), AuthenticationError (401), BadRequestError (400), InternalServerError (500),
   * RateLimitError (429) once retries run out; APIConnectionError, APITimeoutError;
   * APIUserAbortError; ResponseValidationError; ChatServiceError once the client is closed.
   */
  update(id: string, params: CustomerUserUpdateParams, options?: RequestOptions): APIPromise<UpdatedCustomerUser> {
    return this.#pipeline.call(updateCustomerUser, { id }, params, options)
  }
}
