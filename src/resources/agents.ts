import type { ListRequestOptions } from '../core/options.ts'
import type { Transport } from '../core/transport.ts'
import { ArgumentCheck } from '../core/validate.ts'
import { list, pageSchema, plainPage } from '../pagination/list.ts'
import type { PagePromise } from '../pagination/page-promise.ts'
import { agentSchema } from '../schemas/agent.ts'
import { pageParamsSchema } from '../schemas/common.ts'
import type { Agent, AgentListParams } from '../schemas/index.ts'

const agentPage = pageSchema(agentSchema)
/** The company's agents (spec, Endpoint 4). Reach it as `client.agents`. */
export class Agents {
  readonly #transport: Transport

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * Lists every agent of the company, active or not: `GET /rest/v1/agents?page&limit`
   * (spec, Endpoint 4). Check `active` before binding an agent to a token.
   * @param params - `page` (1-based, default 1) and `limit` (1–100, default 20).
   * @param options - Per-call `signal`, `timeout` (ms), `maxRetries`, `headers`, `prefetch`.
   * @returns A {@link PagePromise}: await it for one page, `for await` it for every agent.
   * @throws RequestValidationError for bad params (nothing sent); AuthenticationError (401),
   * BadRequestError (400), InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError; ChatServiceError
   * once the client is closed.
   */
  list(params: AgentListParams = {}, options?: ListRequestOptions): PagePromise<Agent> {
    const args = new ArgumentCheck('agents.list')
    const valid = args.check(pageParamsSchema, params)
    return list(this.#transport, args, options, () => ({
      path: '/agents',
      page: valid.page,
      limit: valid.limit,
      schema: agentPage,
      makePage: plainPage,
    }))
  }
}
