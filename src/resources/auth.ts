import type * as z from 'zod'
import type { APIPromise } from '../core/api-promise.ts'
import { ENDPOINTS } from '../endpoints.ts'
import { defineOperation } from '../internal/operation.ts'
import type { RequestOptions } from '../core/options.ts'
import type { RequestPipeline } from '../internal/pipeline.ts'
import {
  boundIssueTokenResponseSchema,
  issueTokenParamsSchema,
  issueTokenResponseSchema,
  type IssueTokenParams,
  type IssueTokenResponse,
} from '../schemas/auth.ts'

const issueToken = defineOperation({
  endpoint: ENDPOINTS.issueToken,
  params: issueTokenParamsSchema,
  // With an agentId the bound agent must come back; without one the spec does not say.
  response:
    () =>
    (params): z.ZodType<IssueTokenResponse> =>
      params.agentId === undefined ? issueTokenResponseSchema() : boundIssueTokenResponseSchema(),
  success: (status) => status === 200,
  secretFields: ['token'],
})

/** Makes `client.auth` (internal: the class's constructor is private, see src/internal/README.md). */
export let createAuth: (pipeline: RequestPipeline) => Auth

/** Chat-token issuance (spec, Endpoint 1). Reach it as `client.auth`. */
export class Auth {
  readonly #pipeline: RequestPipeline

  static {
    createAuth = (pipeline) => new Auth(pipeline)
  }

  private constructor(pipeline: RequestPipeline) {
    this.#pipeline = pipeline
  }

  /**
   * Issues a signed chat token for one end user, bound to an agent:
   * `POST /rest/v1/auth/token` (spec, Endpoint 1). Only HTTP 200 is success. It is retried like
   * the other calls: the spec identifies the end user by `userId` (returned as `user.externalId`),
   * and the SDK assumes that issuing again for the same `userId` is harmless (another token for the
   * same user; the spec does not say so outright). Pass `{ maxRetries: 0 }` to turn retries off.
   * The token is remembered by the client (last 1,024) and scrubbed from its errors and logs.
   * @param params - `userId` (your id of the end user), `agentId`, optional `expiresIn`
   * (`'<n>h'` or `'<n>d'`, default 24 h).
   * @param options - {@link RequestOptions} of this call.
   * @returns An {@link APIPromise} of `{ token, user: { id, externalId, companyId, agentId }, agent }`;
   * `agent` and `user.agentId` must be in the response (else ResponseValidationError). Store
   * `user.id` to invalidate tokens later.
   * @throws RequestValidationError (nothing sent); APIError subclasses for any status but 200
   * (the spec does not list them); APIConnectionError, APITimeoutError; APIUserAbortError;
   * ResponseValidationError; ChatServiceError once the client is closed.
   */
  issueToken(
    params: IssueTokenParams & { agentId: string },
    options?: RequestOptions,
  ): APIPromise<IssueTokenResponse & { user: { agentId: string }; agent: NonNullable<IssueTokenResponse['agent']> }>
  /**
   * Issues a chat token without binding an agent (spec, Endpoint 1); `agent` and `user.agentId`
   * in the result may be null or absent. Otherwise as the overload with `agentId` above.
   * @param params - `userId`, optional `expiresIn` (`'<n>h'` or `'<n>d'`, default 24 h).
   * @param options - {@link RequestOptions} of this call.
   * @throws RequestValidationError (nothing sent); APIError subclasses for any status but 200;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError;
   * ChatServiceError once the client is closed.
   */
  issueToken(params: IssueTokenParams, options?: RequestOptions): APIPromise<IssueTokenResponse>
  issueToken(params: IssueTokenParams, options?: RequestOptions): APIPromise<IssueTokenResponse> {
    return this.#pipeline.call(issueToken, {}, params, options)
  }
}
