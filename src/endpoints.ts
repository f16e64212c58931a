/**
 * The endpoints of the service (spec, "Endpoints"), once, as data: method, path, the spec's
 * number, the default page size of a list, the members a GET reads from its body, the error
 * statuses the spec documents. The SDK's operations (src/resources), the fake's routes
 * (src/testing/endpoints.ts) and every test matrix (through test/helpers/endpoint-samples.ts) read
 * this table, and each keeps a record keyed by it that the compiler holds complete: a row added
 * here does not compile until the fake and the tests' samples have it too, and the tests then fail
 * until the client has its method, the consumer fixture calls it and the README shows it.
 *
 * A leaf module with no imports, so that the testing kit, which imports nothing else of the SDK
 * (it is a second reading of the spec, to catch the SDK's mistakes), may read it: it shares the
 * spec's table of routes with the SDK, never its behaviour.
 * @internal
 */

/** One endpoint of the service. */
export interface Endpoint {
  /** The SDK method that calls it, e.g. `'agents.list'`: named in errors, logs and traces. */
  readonly name: string
  readonly method: 'GET' | 'POST' | 'PUT'
  /** Path below `/rest/v1`, with `{name}` for each path parameter, e.g. `/customer-users/{id}`. */
  readonly path: string
  /** Its number in the spec's "Endpoints" section. */
  readonly spec: number
  /** For a list: the page size the service uses when `limit` is not given (spec, Limits). */
  readonly defaultLimit?: number
  /** Members of a GET's JSON body besides the credentials (the customer-user filters). */
  readonly bodyFields?: readonly string[]
  /** The error statuses the spec documents for it (spec, Errors); `[]` where it shows none. */
  readonly errors: readonly number[]
}

/** Every endpoint of the spec, in its order. */
export const ENDPOINTS = {
  issueToken: { name: 'auth.issueToken', method: 'POST', path: '/auth/token', spec: 1, errors: [] },
  listCustomerUsers: {
    name: 'customerUsers.list',
    method: 'GET',
    path: '/customer-users',
    spec: 2,
    defaultLimit: 20,
    bodyFields: ['name', 'email', 'external_id'],
    errors: [401, 400, 500],
  },
  updateCustomerUser: { name: 'customerUsers.update', method: 'PUT', path: '/customer-users/{id}', spec: 3, errors: [404, 401, 400, 500] },
  listAgents: { name: 'agents.list', method: 'GET', path: '/agents', spec: 4, defaultLimit: 20, errors: [401, 400, 500] },
  listConversations: {
    name: 'conversations.list',
    method: 'GET',
    path: '/conversations',
    spec: 5,
    defaultLimit: 20,
    errors: [401, 400, 500],
  },
  listMessages: {
    name: 'conversations.messages.list',
    method: 'GET',
    path: '/conversations/{conversationId}/messages',
    spec: 6,
    defaultLimit: 50,
    errors: [404, 401, 400, 500],
  },
} as const satisfies Record<string, Endpoint>

/** The key of an endpoint in {@link ENDPOINTS}. */
export type EndpointKey = keyof typeof ENDPOINTS

/** A list endpoint: a GET with a default page size. */
export type ListEndpoint = Endpoint & { readonly method: 'GET'; readonly defaultLimit: number }
