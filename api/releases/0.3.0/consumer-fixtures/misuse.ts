// Negative type check (scripts/consumer/run.sh: ts-nodenext-esm, ts-nodenext-cjs, ts-bundler).
// Each statement is a mistake a user could make, preceded by `// @ts-expect-error`. tsc passes
// only if EVERY one of them is a type error: a misuse that type-checks leaves its directive
// unused, which is itself an error (TS2578). So this fails when the published types get looser
// (a parameter widened to `any`, a template literal type lost, a dependency's types not found,
// ...). Never run, only type-checked.
/* eslint-disable @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- deliberate misuse */
import { ChatServiceClient, ChatServiceError, type Agent, type Page } from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'

declare const client: ChatServiceClient
declare const error: ChatServiceError
declare const agents: Page<Agent>

export async function misuse(): Promise<unknown[]> {
  // @ts-expect-error `limit` is a number
  await client.agents.list({ limit: '10' })
  // @ts-expect-error agents has no such method (a misspelling of list)
  await client.agents.lists()
  // @ts-expect-error there is no tokens resource
  await client.tokens.create({ userId: 'u' })
  // @ts-expect-error `expiresIn` takes hours or days ('12h', '7d'), not minutes
  await client.auth.issueToken({ userId: 'u', expiresIn: '10m' })
  // @ts-expect-error `userId` is required
  await client.auth.issueToken({ agentId: 'agt_001' })
  // @ts-expect-error `external_id` is a string
  await client.customerUsers.list({ external_id: 42 })
  // @ts-expect-error no such filter
  await client.customerUsers.list({ phone: '555-0100' })
  // @ts-expect-error no such field to update
  await client.customerUsers.update('cu_1', { nickname: 'x' })
  // @ts-expect-error the conversation id is required
  await client.conversations.messages.list()
  // @ts-expect-error unknown request option
  await client.agents.list({}, { retries: 3 })
  // @ts-expect-error keyId is a string (it may be omitted: CHAT_SERVICE_KEY_ID is read then)
  const unconfigured = new ChatServiceClient({ baseUrl: 'https://chat.example.com', keyId: 42 })
  // @ts-expect-error only a page of messages has `conversation`
  const conversation = agents.conversation
  // @ts-expect-error an agent's name is a string
  const count: number = agents.data[0]!.name
  // @ts-expect-error only APIError (and ResponseValidationError) carry a status
  const status = error.status
  // @ts-expect-error the fake's latency is a number of ms
  const slowFake = createFakeChatService({ latencyMs: '5' })
  // @ts-expect-error generateDataset needs a seed
  const dataset = generateDataset({ agents: 3 })
  return [unconfigured, conversation, count, status, slowFake, dataset]
}
