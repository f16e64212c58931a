import type { ListRequestOptions } from '../core/options.ts'
import type { RequestPipeline } from '../internal/pipeline.ts'
import { defineList, listPages } from '../pagination/list.ts'
import { ENDPOINTS } from '../endpoints.ts'
import type { PagePromise } from '../pagination/page-promise.ts'
import { agentSchema, type Agent } from '../schemas/agent.ts'
import { pageParamsSchema, type PageParams } from '../schemas/common.ts'

const listAgents = defineList({ endpoint: ENDPOINTS.listAgents, params: pageParamsSchema, item: agentSchema })

/** Makes `client.agents` (internal: the class's constructor is private, see src/internal/README.md). */
export let createAgents: (pipeline: RequestPipeline) => Agents

/** The company's agents (spec, Endpoint 4). Reach it as `client.agents`. */
export class Agents {
  readonly #pipeline: RequestPipeline

  static {
    createAgents = (pipeline) => new Agents(pipeline)
  }

  private constructor(pipeline: RequestPipeline) {
    this.#pipeline = pipeline
  }

  /**
   * Lists every agent of the company, active or not: `GET /rest/v1/agents?page&limit`
   * (spec, Endpoint 4). Check `active` before binding an agent to a token.
   * @param params - `page` (1-based, default 1) and `limit` (1–100, default 20).
   * @param options - {@link ListRequestOptions} of this call (each page's request; `prefetch` and `rescan` for iteration).
   * @returns A {@link PagePromise}: await it for one page, `for await` it for every agent.
   * @throws RequestValidationError for bad params (nothing sent); AuthenticationError (401),
   * BadRequestError (400), InternalServerError (500), RateLimitError (429) once retries run out;
   * APIConnectionError, APITimeoutError; APIUserAbortError; ResponseValidationError; ChatServiceError
   * once the client is closed; while iterating, UnstableListError for a list that will not hold still.
   */
  list(params: PageParams = {}, options?: ListRequestOptions): PagePromise<Agent> {
    return listPages(this.#pipeline, listAgents, {}, params, options)
  }
}
