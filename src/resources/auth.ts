import { requestOptionsSchema, type RequestOptions } from '../core/options.ts'
import type { Transport } from '../core/transport.ts'
import { ArgumentCheck, parseResponse } from '../core/validate.ts'
import { boundIssueTokenResponseSchema, issueTokenParamsSchema, issueTokenResponseSchema } from '../schemas/auth.ts'
import type { BoundIssueTokenResponse, IssueTokenParams, IssueTokenResponse } from '../schemas/index.ts'

/** Chat-token issuance (spec, Endpoint 1). Reach it as `client.auth`. */
export class Auth {
  readonly #transport: Transport

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * Issues a signed chat token for one end user, optionally bound to an agent:
   * `POST /rest/v1/auth/token` (spec, Endpoint 1). Only HTTP 200 is success. The service upserts
   * the user by `userId`, so a retried call is safe; pass `{ maxRetries: 0 }` to turn retries off.
   * The token is remembered by the client (last 1,024) and scrubbed from its errors and logs.
   * @param params - `userId` (your id of the end user), optional `agentId`, optional `expiresIn`
   * (`'<n>h'` or `'<n>d'`, default 24 h).
   * @param options - Per-call `signal`, `timeout` (ms), `maxRetries`, `headers`.
   * @returns `{ token, user: { id, externalId, companyId, agentId }, agent }`. Store `user.id` to
   * invalidate tokens later. With an `agentId`, `agent` and `user.agentId` must be in the response
   * (else ResponseValidationError); without one, they may be null or absent (the spec does not say).
   * @throws RequestValidationError (nothing sent); APIError subclasses for any status but 200
   * (the spec does not list them); APIConnectionError, APITimeoutError; APIUserAbortError;
   * ResponseValidationError; ChatServiceError once the client is closed.
   */
  issueToken(params: IssueTokenParams & { agentId: string }, options?: RequestOptions): Promise<BoundIssueTokenResponse>
  /**
   * Issues a chat token without binding an agent (spec, Endpoint 1); `agent` and `user.agentId`
   * in the result may be null or absent. Otherwise as the overload with `agentId` above.
   * @param params - `userId`, optional `expiresIn` (`'<n>h'` or `'<n>d'`, default 24 h).
   * @param options - Per-call `signal`, `timeout` (ms), `maxRetries`, `headers`.
   * @throws RequestValidationError (nothing sent); APIError subclasses for any status but 200;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError;
   * ChatServiceError once the client is closed.
   */
  issueToken(params: IssueTokenParams, options?: RequestOptions): Promise<IssueTokenResponse>
  async issueToken(params: IssueTokenParams, options?: RequestOptions): Promise<IssueTokenResponse> {
    const args = new ArgumentCheck('auth.issueToken')
    const body = args.check(issueTokenParamsSchema, params)
    const validOptions = args.check(requestOptionsSchema, options ?? {}, ['options']) as RequestOptions
    args.done()
    const response = await this.#transport.request({
      method: 'POST',
      path: '/auth/token',
      body,
      options: validOptions,
      isSuccess: (status) => status === 200,
      secretFields: ['token'],
    })
    const schema = body.agentId === undefined ? issueTokenResponseSchema : boundIssueTokenResponseSchema
    return parseResponse(schema, response, this.#transport.redactor)
  }
}
