// Consumer checks "ts-*" (scripts/consumer/run.sh): under `exactOptionalPropertyTypes: true` (set in
// every ts-* project), every optional property of every input the SDK takes accepts an explicit
// `undefined` (`?: T | undefined`), as the runtime does (issue 11, "Types that fit users'
// compilers"). A wrapper that forwards its own optional inputs (`{ signal: maybeSignal }`) must
// not need `signal ? { signal } : {}`.
//
// Two halves:
// - `RejectsUndefined<T>` names the optional properties of T that refuse `undefined`; each public
//   input type must give `never`. A failure names the offending properties in the compiler's message.
// - main() builds every input WITH EVERY KEY PRESENT (`Forwarded<T>`: the compiler insists on
//   each key, so a new option is covered the day it appears), the optional ones `undefined`, passes
//   them to every method and to the constructor, and runs them against the fake (Node's type
//   stripping, in the nodenext ESM project): explicit `undefined` means "the default" at runtime.
// Written to compile as ESM and as CommonJS alike: no top-level await, no import.meta.
import { strict as assert } from 'node:assert'
import {
  ChatServiceClient,
  type AgentListParams,
  type ClientOptions,
  type ClientOverrides,
  type ConversationListParams,
  type CustomerUserListParams,
  type CustomerUserUpdateFields,
  type CustomerUserUpdateParams,
  type IssueTokenParams,
  type ListRequestOptions,
  type MessageListParams,
  type PageParams,
  type RequestOptions,
} from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Assert<T extends true> = T
/** Fails to compile naming the keys: `Type '"signal"' does not satisfy the constraint 'never'`. */
type NoneRefused<Keys extends never> = Keys

/** The keys of T that may be left out. */
type OptionalKeys<T> = { [K in keyof T]-?: Pick<T, K> extends Required<Pick<T, K>> ? never : K }[keyof T]
/** The optional properties of T (each member of a union on its own) that refuse an explicit `undefined`. */
type RejectsUndefined<T> = T extends unknown
  ? { [K in OptionalKeys<T>]-?: { [P in K]: undefined } extends Pick<T, K> ? never : K }[OptionalKeys<T>]
  : never
/** T with every key present; the optional ones may be `undefined`: what a forwarding wrapper passes. */
type Forwarded<T> = { [K in keyof T]-?: Pick<T, K> extends Required<Pick<T, K>> ? T[K] : T[K] | undefined }

export type OptionalPropertiesAcceptUndefined = [
  // The detector itself, so that a project without exactOptionalPropertyTypes cannot pass vacuously.
  Assert<Same<RejectsUndefined<{ strict?: string; loose?: number | undefined; required: string }>, 'strict'>>,
  NoneRefused<RejectsUndefined<ClientOptions>>,
  NoneRefused<RejectsUndefined<ClientOverrides>>,
  NoneRefused<RejectsUndefined<RequestOptions>>,
  NoneRefused<RejectsUndefined<ListRequestOptions>>,
  NoneRefused<RejectsUndefined<PageParams>>,
  NoneRefused<RejectsUndefined<AgentListParams>>,
  NoneRefused<RejectsUndefined<ConversationListParams>>,
  NoneRefused<RejectsUndefined<MessageListParams>>,
  NoneRefused<RejectsUndefined<CustomerUserListParams>>,
  NoneRefused<RejectsUndefined<IssueTokenParams>>,
  NoneRefused<RejectsUndefined<CustomerUserUpdateFields>>,
  NoneRefused<RejectsUndefined<CustomerUserUpdateParams>>,
]

/** Per-call options as a wrapper forwards them: its caller's signal, or none. */
function callOptions(signal: AbortSignal | undefined): Forwarded<RequestOptions> {
  return {
    signal,
    timeout: undefined,
    maxRetries: undefined,
    totalTimeout: undefined,
    rateLimitPause: undefined,
    headers: undefined,
    responseValidation: undefined,
  }
}

function listOptions(signal: AbortSignal | undefined): Forwarded<ListRequestOptions> {
  return { ...callOptions(signal), prefetch: undefined }
}

function pageParams(page: number | undefined, limit: number | undefined): Forwarded<PageParams> {
  return { page, limit }
}

export async function main(): Promise<void> {
  const seed = generateDataset({ seed: 7, agents: 3, customerUsers: 4, conversations: 2, messages: 6 })
  const key = seed.companies[0]?.keys[0]
  if (key === undefined) throw new Error('the dataset has no API key')
  const fake = createFakeChatService({ seed })
  await using server = await fake.listen()
  const maybeSignal: AbortSignal | undefined = undefined

  const options: Forwarded<ClientOptions> = {
    baseUrl: server.url,
    keyId: key.keyId,
    keySecret: key.keySecret,
    timeout: undefined,
    maxRetries: undefined,
    totalTimeout: undefined,
    rateLimitPause: undefined,
    rateLimitStore: undefined,
    dispatcher: undefined,
    headers: undefined,
    logger: undefined,
    logLevel: undefined,
    connections: undefined,
    maxResponseBytes: undefined,
    responseValidation: undefined,
    compression: undefined,
    allowInsecureHttp: undefined,
    dangerouslyAllowBrowser: undefined,
  }
  await using client = new ChatServiceClient(options)
  const overrides: Forwarded<ClientOverrides> = {
    timeout: undefined,
    maxRetries: undefined,
    totalTimeout: undefined,
    rateLimitPause: undefined,
    headers: undefined,
    logger: undefined,
    logLevel: undefined,
    maxResponseBytes: undefined,
    responseValidation: undefined,
    compression: undefined,
  }
  const derived = client.withOptions(overrides)

  const agentParams: Forwarded<AgentListParams> = pageParams(undefined, undefined)
  const agents = await derived.agents.list(agentParams, listOptions(maybeSignal))
  assert.equal(agents.data.length, 3)
  assert.deepEqual(agents.pagination, { page: 1, limit: 20, total: 3, total_pages: 1 })

  const userParams: Forwarded<CustomerUserListParams> = {
    ...pageParams(undefined, undefined),
    name: undefined,
    email: undefined,
    external_id: undefined,
  }
  const users = await client.customerUsers.list(userParams, listOptions(maybeSignal))
  assert.equal(users.data.length, 4)
  const user = users.data[0]
  if (user === undefined) throw new Error('no customer user')

  const tokenParams: Forwarded<IssueTokenParams> = { userId: user.external_id, agentId: undefined, expiresIn: undefined }
  const issued = await client.auth.issueToken(tokenParams, callOptions(maybeSignal))
  assert.equal(issued.user.externalId, user.external_id)

  const change: Forwarded<CustomerUserUpdateFields> & { name: string } = { name: 'Forwarded', email: undefined, metadata: undefined }
  const updated = await client.customerUsers.update(user.id, change, callOptions(maybeSignal))
  assert.equal(updated.name, 'Forwarded')
  // An update built up at run time type-checks (issue 18); an empty one is refused at run time, unsent.
  const computed: { name?: string; email?: string | undefined } = {}
  if (user.name !== 'Computed') computed.name = 'Computed'
  assert.equal((await client.customerUsers.update(user.id, computed)).name, 'Computed')
  const sent = fake.requests.length
  await assert.rejects(client.customerUsers.update(user.id, { email: undefined }), { name: 'RequestValidationError' })
  assert.equal(fake.requests.length, sent)

  const conversationParams: Forwarded<ConversationListParams> = pageParams(undefined, undefined)
  const conversations = await client.conversations.list(conversationParams, listOptions(maybeSignal))
  const conversation = conversations.data[0]
  if (conversation === undefined) throw new Error('no conversation')

  const messageParams: Forwarded<MessageListParams> = pageParams(undefined, undefined)
  const messages = await client.conversations.messages.list(conversation.id, messageParams, listOptions(maybeSignal))
  assert.equal(messages.pagination.limit, 50)
}

main().then(
  () => {
    console.log('optional-undefined: every optional input accepted an explicit undefined')
  },
  (error: unknown) => {
    console.error(error)
    process.exitCode = 1
  },
)
