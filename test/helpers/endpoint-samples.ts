// One valid call of each endpoint of the spec's table (src/endpoints.ts), for every test matrix:
// the SDK's (test/core/errors.test.ts, wire.test.ts, endpoints.test.ts) and the fake's
// (test/testing/: through helpers.ts). The record is keyed by the table, and the compiler holds it
// complete: a row added to the table does not compile until it has a sample here, and then every
// matrix covers the new endpoint (its errors, its bytes on the wire, its success path, the fake's
// credentials, bodies and request ids).
import type { ChatServiceClient } from 'chat-service-sdk'
import { ENDPOINTS as SPEC, type Endpoint, type EndpointKey } from '../../src/endpoints.ts'
import { agent, conversation, customerUser, listBody, message, tokenResponse, updatedUser } from './fixtures.ts'

/** `page` and `limit`, for a list. */
export interface PageArguments {
  readonly page?: number
  readonly limit?: number
}

export interface EndpointSample {
  /**
   * Its path parameters: ids of company A of the fake's fixture seed (test/testing/helpers.ts), so
   * that the fake answers the call with a success.
   */
  readonly params: Readonly<Record<string, string>>
  /** The JSON body members besides the credentials that `call` sends (and the fake accepts). */
  readonly members?: Readonly<Record<string, unknown>>
  /** The call through the SDK, with these params and members (and `page`/`limit` for a list). */
  readonly call: (client: ChatServiceClient, page?: PageArguments) => PromiseLike<unknown>
  /** A success body the service could send for it. */
  readonly reply: () => Record<string, unknown>
}

export const SAMPLES = {
  issueToken: {
    params: {},
    members: { userId: 'ext_new' },
    call: (client) => client.auth.issueToken({ userId: 'ext_new' }),
    reply: () => tokenResponse(),
  },
  listCustomerUsers: {
    params: {},
    call: (client, page) => client.customerUsers.list({ ...page }),
    reply: () => listBody([customerUser(1), customerUser(2)]),
  },
  updateCustomerUser: {
    params: { id: 'u_1' },
    members: { name: 'X' },
    call: (client) => client.customerUsers.update('u_1', { name: 'X' }),
    reply: () => updatedUser('u_1'),
  },
  listAgents: {
    params: {},
    call: (client, page) => client.agents.list({ ...page }),
    reply: () => listBody([agent(1), agent(2)]),
  },
  listConversations: {
    params: {},
    call: (client, page) => client.conversations.list({ ...page }),
    reply: () => listBody([conversation(1)]),
  },
  listMessages: {
    params: { conversationId: 'conv_1' },
    call: (client, page) => client.conversations.messages.list('conv_1', { ...page }),
    reply: () => listBody([message(1, 'conv_1')], 1, 50, 1, { conversation: { id: 'conv_1', title: 'T' } }),
  },
} satisfies Record<EndpointKey, EndpointSample>

/** An endpoint of the table with its sample: `path` is the request's path (no query), from `/rest/v1` on. */
export interface SampledEndpoint extends EndpointSample {
  readonly key: EndpointKey
  readonly endpoint: Endpoint
  readonly name: string
  readonly method: Endpoint['method']
  readonly path: string
  /** A list: a GET with a default page size. */
  readonly list: boolean
}

/** Every endpoint of the spec's table, in its order, with its sample. */
export const SAMPLED: readonly SampledEndpoint[] = (Object.keys(SPEC) as EndpointKey[]).map((key) => {
  const endpoint: Endpoint = SPEC[key]
  const sample: EndpointSample = SAMPLES[key]
  const path = `/rest/v1${endpoint.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(sample.params[name] ?? ''))}`
  return { ...sample, key, endpoint, name: endpoint.name, method: endpoint.method, path, list: endpoint.defaultLimit !== undefined }
})

/** The sampled endpoint of a request (any prefix before `/rest/v1`, any ids, no query). */
export function sampleFor(method: string, pathname: string): SampledEndpoint | undefined {
  return SAMPLED.find((sample) => sample.method === method && PATTERNS.get(sample.key)?.test(pathname) === true)
}

const PATTERNS = new Map(SAMPLED.map((sample) => [sample.key, new RegExp(`/rest/v1${sample.endpoint.path.replace(/\{\w+\}/g, '[^/]+')}$`)]))
