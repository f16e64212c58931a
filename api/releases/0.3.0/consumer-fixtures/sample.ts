// Consumer checks "ts-*" (scripts/consumer/run.sh): a strict TypeScript user of the packed
// tarball. Type-checked with `tsc --noEmit` under nodenext (ESM and CommonJS packages) and
// bundler resolution; run as well (Node's type stripping) in the nodenext ESM project. It uses
// every endpoint, the list types (Page, PagePromise, MessagePage, `for await`, `.pages()`), the
// option and result types, and narrows with `instanceof` on every error class. Written to compile
// as ESM and as CommonJS alike: no top-level await, no import.meta.
import { strict as assert } from 'node:assert'
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ChatServiceClient,
  ChatServiceError,
  ConflictError,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  InternalServerError,
  MessagePage,
  NotFoundError,
  Page,
  PagePromise,
  PermissionDeniedError,
  RateLimitError,
  RequestValidationError,
  ResponseValidationError,
  UnprocessableEntityError,
  VERSION,
  type Agent,
  type ClientOptions,
  type Conversation,
  type CustomerUser,
  type CustomerUserPage,
  type CustomerUserListParams,
  type CustomerUserUpdateParams,
  type ExpiresIn,
  type IssueTokenParams,
  type IssueTokenResponse,
  type ListRequestOptions,
  type Logger,
  type LogLevel,
  type Message,
  type MessageConversation,
  type MessageRole,
  type Pagination,
  type RequestOptions,
  type UpdatedCustomerUser,
  type ValidationIssue,
} from 'chat-service-sdk'
import {
  createFakeChatService,
  generateDataset,
  WARNING_HEADER,
  type FakeChatService,
  type FakeSeed,
  type FakeServerHandle,
  type FaultSpec,
  type VerifyTokenResult,
} from 'chat-service-sdk/testing'

// Compile-time guards: a public type that silently became `any` (a dependency's types not found,
// a broken re-export) would make everything below type-check while proving nothing.
type IsAny<T> = 0 extends 1 & T ? true : false
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Assert<T extends true> = T
export type TypeChecks = [
  Assert<Same<IsAny<Agent>, false>>,
  Assert<Same<IsAny<CustomerUser>, false>>,
  Assert<Same<IsAny<UpdatedCustomerUser>, false>>,
  Assert<Same<IsAny<Conversation>, false>>,
  Assert<Same<IsAny<Message>, false>>,
  Assert<Same<IsAny<IssueTokenResponse>, false>>,
  Assert<Same<IsAny<ChatServiceClient['auth']>, false>>,
  Assert<Same<IsAny<FakeChatService>, false>>,
  Assert<Same<IsAny<FakeSeed>, false>>,
  Assert<Same<Agent['active'], boolean>>,
  Assert<Same<Pagination, { page: number; limit: number; total: number; total_pages: number }>>,
  Assert<Same<CustomerUser['metadata'], Record<string, unknown> | null>>,
  Assert<Same<IssueTokenResponse['user']['agentId'], string | null | undefined>>,
  Assert<Same<Awaited<ReturnType<ChatServiceClient['conversations']['messages']['list']>>, MessagePage>>,
  Assert<Same<ReturnType<ChatServiceClient['customerUsers']['list']>, PagePromise<CustomerUser, CustomerUserPage>>>,
  Assert<Same<CustomerUserPage['skipped'][number]['issues'], readonly ValidationIssue[]>>,
  Assert<Same<Awaited<ReturnType<FakeChatService['listen']>>, FakeServerHandle>>,
]

/** What a user's error handler looks like: every public error class narrows. */
export function describeError(error: unknown): string {
  if (error instanceof NotFoundError) return `not found: ${error.status} ${error.method} ${error.path}`
  if (error instanceof AuthenticationError || error instanceof PermissionDeniedError) return `credentials: ${error.status}`
  if (error instanceof BadRequestError || error instanceof ConflictError || error instanceof UnprocessableEntityError) {
    return `refused: ${JSON.stringify(error.body)}`
  }
  if (error instanceof RateLimitError) return `rate limited, retry after ${error.headers['retry-after'] ?? '?'}`
  if (error instanceof InternalServerError) return `service failed: ${error.status}`
  if (error instanceof APIError) {
    const status: number = error.status
    return `HTTP ${status}`
  }
  if (error instanceof APITimeoutError) return `timed out: ${error.method} ${error.path}`
  if (error instanceof APIConnectionError) return `no connection: ${error.method} ${error.path}`
  if (error instanceof APIUserAbortError) return 'aborted'
  if (error instanceof RequestValidationError) {
    const issues: readonly ValidationIssue[] = error.issues
    return `invalid: ${issues.map((issue) => `${issue.path.join('.')} ${issue.code}`).join('; ')}`
  }
  if (error instanceof ResponseValidationError) return `unexpected response: HTTP ${error.status}, ${error.issues.length} issues`
  if (error instanceof ChatServiceError) return `${error.name}: ${error.message}`
  return String(error)
}

async function caught(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

export async function main(): Promise<void> {
  const seed: FakeSeed = generateDataset({ seed: 21, agents: 5, customerUsers: 25, conversations: 3, messages: 60 })
  const company = seed.companies[0]
  const key = company?.keys[0]
  if (company === undefined || key === undefined) throw new Error('the dataset has no API key')
  const fake: FakeChatService = createFakeChatService({ seed })
  await using server = await fake.listen()
  const logger: Logger = console
  const logLevel: LogLevel = 'error'
  const options: ClientOptions = {
    baseUrl: server.url,
    keyId: key.keyId,
    keySecret: key.keySecret,
    logger,
    logLevel,
    timeout: DEFAULT_TIMEOUT_MS,
    maxRetries: DEFAULT_MAX_RETRIES,
  }
  await using client = new ChatServiceClient(options)

  // Endpoint 4: agents. A PagePromise is awaited for one page, iterated for every item or page.
  const agentsPromise: PagePromise<Agent> = client.agents.list({ limit: 2 })
  const firstAgents: Page<Agent> = await agentsPromise
  const pagination: Pagination = firstAgents.pagination
  assert.deepEqual(pagination, { page: 1, limit: 2, total: 5, total_pages: 3 })
  assert.ok(firstAgents.hasNextPage())
  const secondAgents: Page<Agent> = await firstAgents.getNextPage()
  assert.equal(secondAgents.pagination.page, 2)
  const agents: Agent[] = []
  for await (const agent of client.agents.list({ limit: 2 }, { prefetch: 1 })) agents.push(agent)
  assert.equal(agents.length, 5)
  let agentPages = 0
  for await (const page of agentsPromise.pages()) agentPages += page.data.length > 0 ? 1 : 0
  assert.equal(agentPages, 3)
  const agent = agents.find((a) => a.active)
  if (agent === undefined) throw new Error('no active agent')

  // Endpoint 2: customer users.
  const someone = fake.listCustomerUsers(company.id)[2]
  if (someone === undefined) throw new Error('no customer user')
  const lookup: CustomerUserListParams = { external_id: someone.external_id, limit: 10 }
  const found: Page<CustomerUser> = await client.customerUsers.list(lookup)
  assert.deepEqual(
    found.data.map((u: CustomerUser) => u.id),
    [someone.id],
  )

  // Endpoint 1: token issuance.
  const expiresIn: ExpiresIn = '12h'
  const tokenParams: IssueTokenParams = { userId: someone.external_id, agentId: agent.id, expiresIn }
  const requestOptions: RequestOptions = { timeout: 5_000, maxRetries: 1, signal: AbortSignal.timeout(30_000) }
  const issued: IssueTokenResponse = await client.auth.issueToken(tokenParams, requestOptions)
  const verified: VerifyTokenResult = fake.verifyToken(issued.token)
  assert.ok(verified.valid && verified.claims.exp - verified.claims.iat === 12 * 3600, 'token lifetime')
  assert.equal(issued.agent?.id, agent.id)

  // Endpoint 3: update.
  const change: CustomerUserUpdateParams = { metadata: { source: 'typescript', nested: { ok: true } } }
  const updated: UpdatedCustomerUser = await client.customerUsers.update(issued.user.id, change)
  assert.deepEqual(updated.metadata, change.metadata)

  // Endpoint 5: conversations.
  const conversations: Conversation[] = []
  for await (const conversation of client.conversations.list({ limit: 2 })) conversations.push(conversation)
  assert.equal(conversations.length, 3)
  const first = conversations[0]
  if (first === undefined) throw new Error('no conversation')

  // Endpoint 6: messages, with the conversation block of each page.
  const listOptions: ListRequestOptions = { prefetch: 2 }
  const messagesPromise: PagePromise<Message, MessagePage> = client.conversations.messages.list(first.id, { limit: 5 }, listOptions)
  const messagePage: MessagePage = await messagesPromise
  const about: MessageConversation = messagePage.conversation
  assert.equal(about.id, first.id)
  const roles: MessageRole[] = []
  for await (const message of messagesPromise) roles.push(message.role)
  assert.equal(roles.length, first.message_count)

  // Errors, as the installed build throws them.
  assert.equal(describeError(await caught(client.customerUsers.update('cu_missing', { name: 'x' }))).slice(0, 14), 'not found: 404')
  const fault: FaultSpec = { status: 503, match: { method: 'GET' } }
  fake.failNext(1, fault)
  const serverError = await caught(client.agents.list({}, { maxRetries: 0 }))
  assert.ok(serverError instanceof InternalServerError && serverError.status === 503, describeError(serverError))
  const aborted = await caught(client.conversations.list({}, { signal: AbortSignal.abort() }))
  assert.ok(aborted instanceof APIUserAbortError, describeError(aborted))
  const invalid = await caught(client.conversations.messages.list(first.id, { limit: 101 }))
  assert.ok(invalid instanceof RequestValidationError, describeError(invalid))
  assert.equal(typeof WARNING_HEADER, 'string')
  assert.match(VERSION, /^\d+\.\d+\.\d+/)
}

main().then(
  () => {
    console.log(`typescript sample: every endpoint ok (chat-service-sdk ${VERSION}, node ${process.version})`)
  },
  (error: unknown) => {
    console.error(error)
    process.exitCode = 1
  },
)
