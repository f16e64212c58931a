/**
 * `chat-service-sdk/testing`: an in-memory, spec-faithful fake of the whole
 * Chat Service (see `chat-service-api.md`), for tests, examples and benchmarks.
 *
 * ```ts
 * import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
 *
 * const fake = createFakeChatService({ seed: generateDataset({ seed: 1 }) })
 * const server = await fake.listen()            // http://127.0.0.1:<port>
 * // keyId 'key_test_1', keySecret: fake seed's companies[0].keys[0].keySecret
 * await server.close()
 * ```
 *
 * The fake does not import the SDK: it is a separate implementation of the
 * spec, so it can catch SDK bugs.
 *
 * README-notes
 * ------------
 * Two modes serve the same state:
 *
 * - listen mode, `fake.listen()`: a real `node:http` server on loopback. Full
 *   fidelity: it reads the JSON body of every request, GET included, checks
 *   `keyId`/`keySecret` there on every endpoint, and carries out every fault.
 *
 * - msw mode, from the subpath `chat-service-sdk/testing/msw`:
 *   `createFakeHandlers(fake, baseUrl)` + `createMswNetwork(handlers)`: msw 3
 *   handlers, reached by undici through msw's socket-level interceptor
 *   (`defineNetwork` + `InterceptorSource` + `HttpRequestInterceptor`;
 *   `setupServer()` does not see undici). msw is an OPTIONAL peer: only that
 *   subpath imports it, so this entry works and type-checks without it. Limitation: a fetch `Request` cannot
 *   carry a body on GET, so msw handlers see an EMPTY body on GET (the
 *   `content-length` header still shows one). For GET in msw mode therefore:
 *     * credentials cannot be checked: the fake requires
 *       `content-type: application/json` and a non-zero `content-length`
 *       (else 401) and attributes the request to `companyForGet` (default:
 *       the first company);
 *     * customer-user filters (`name`, `email`, `external_id`) cannot be seen:
 *       the unfiltered list is returned with the response header
 *       `x-fake-service-warning`;
 *     * the recorded request has `body: undefined, bodyVisible: false`.
 *   POST/PUT bodies are fully visible. Faults: status, headers, body, delays
 *   and slow bodies work; `dropConnection: 'before-headers'` becomes
 *   `HttpResponse.error()` (a network error, not a TCP reset) and `'mid-body'`
 *   an errored response stream. Paths are seen after WHATWG URL normalisation.
 *
 * Choices where the spec is open (the fake's, not the service's):
 * - Error body: `{ "error": { "status": <n>, "message": "..." } }`,
 *   `content-type: application/json; charset=utf-8` (same as success bodies).
 * - Order of checks: route (404/405) → JSON body (400) → credentials (401) →
 *   query and fields (400) → referenced records (404). A body is read as JSON
 *   only with a JSON `content-type`; otherwise credentials count as missing.
 * - Only `/rest/v1/...` exactly: `/rest/v1/v1/...` and trailing slashes are 404.
 * - `page`/`limit`: digits only, >= 1, safe integers, given at most once;
 *   `limit` <= 100; anything else is 400. Other query parameters are ignored.
 * - Lists are ordered by `created_at`, then `id`; messages oldest first.
 * - `name`/`email` filters: exact (case-sensitive) by default, or
 *   case-insensitive substring with `filterMatch: 'partial'`; several filters
 *   combine with AND; `external_id` is always exact.
 * - Update: only `name`, `email`, `metadata` are read (other fields ignored);
 *   `metadata` is REPLACED, not merged; `updated_at` always moves forward (at
 *   least 1 ms past its previous value, even with a frozen clock).
 * - Token issuance: users are upserted by `external_id` = `userId`; a new one
 *   gets `name: null, email: null, metadata: {}, active: true`;
 *   `last_seen_at` becomes now; an inactive agent still gets a token; an
 *   unknown or other company's `agentId` is 404. Token: HS256 JWT with claims
 *   `{ sub, external_id, company_id, agent_id, iat, exp }` (seconds).
 *
 * @module
 */

import {} from '../engine-check.ts' // first: refuses an unsupported Node.js (see engine-check.ts)
export { createFakeChatService, type FakeChatService } from './fake-service.ts'
export { generateDataset, mulberry32, type GenerateDatasetOptions } from './dataset.ts'
export { WARNING_HEADER } from './routes.ts'
export type {
  AgentRecord,
  ApiKeySeed,
  CompanySeed,
  ConversationRecord,
  ConversationSeed,
  CustomerUserRecord,
  CustomerUserSeed,
  FakeChatServiceOptions,
  FakeSeed,
  FakeServerHandle,
  FaultSpec,
  FilterMatch,
  MessageRecord,
  RecordedRequest,
  StoredCustomerUser,
  TokenClaims,
  UpdatedCustomerUserRecord,
  VerifyTokenResult,
} from './types.ts'
