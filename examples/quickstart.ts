// Quickstart: the SDK's main operations once each, against the real service or the embedded fake.
//   npm start
import { APIError, ChatServiceError } from 'chat-service-sdk'
import { connect } from './connect.ts'

const { client, description, close } = await connect()
console.log(`Using ${description}.`)

try {
  // 1. Agents: all of them, then the active ones (check `active` before binding an agent).
  let agentCount = 0
  const activeAgents = []
  for await (const agent of client.agents.list({ limit: 100 })) {
    agentCount++
    if (agent.active) activeAgents.push(agent)
  }
  console.log(`agents: ${agentCount} (${activeAgents.length} active: ${activeAgents.map((a) => a.name).join(', ')})`)
  const agent = activeAgents[0]
  if (agent === undefined) throw new Error('the company has no active agent to bind a token to')

  // 2. A customer user, found by external_id (the recommended lookup).
  const firstPage = await client.customerUsers.list({ limit: 1 })
  const someone = firstPage.data[0]
  if (someone === undefined) throw new Error('the company has no customer users')
  const found = await client.customerUsers.list({ external_id: someone.external_id })
  const user = found.data[0]
  console.log(`found customer user ${user?.id} by external_id ${someone.external_id} (${found.pagination.total} match)`)

  // 3. A chat token for that user, bound to the agent. Never print the token itself.
  const issued = await client.auth.issueToken({ userId: someone.external_id, agentId: agent.id, expiresIn: '1h' })
  console.log(`issued a chat token (${issued.token.length} characters, 1h) for user ${issued.user.id}, agent ${issued.agent.name}`)

  // 4. Update the user's metadata: send the whole object to keep existing keys.
  const updated = await client.customerUsers.update(issued.user.id, {
    metadata: { ...(user?.metadata ?? {}), quickstart: { version: 1, lastRunAt: new Date().toISOString() } },
  })
  console.log(`updated metadata of ${updated.id} at ${updated.updated_at}: keys ${Object.keys(updated.metadata ?? {}).join(', ')}`)

  // 5. Every customer user, every conversation (with the first page's response), and every message.
  let customerUsers = 0
  for await (const _ of client.customerUsers.list({ limit: 100 })) customerUsers++
  const { data: conversationPage, response } = await client.conversations.list({ limit: 100 }).withResponse()
  console.log(`conversations: HTTP ${response.status}, request id ${response.requestId ?? '(none sent)'}`)
  let conversations = 0
  for await (const _ of conversationPage) conversations++
  // Every message of every conversation, in nested-loop order, 8 requests in flight.
  const all = client.conversations.messages.listAll({ concurrency: 8 })
  const byRole = new Map<string, number>()
  for await (const message of all) byRole.set(message.role, (byRole.get(message.role) ?? 0) + 1)
  const roles = [...byRole].map(([role, n]) => `${n} ${role}`).join(', ')
  console.log(`customer users: ${customerUsers}`)
  console.log(`conversations: ${conversations}`)
  console.log(`messages: ${all.progress.done} of ${all.progress.total ?? '?'} expected (${roles})`)
} catch (error) {
  if (error instanceof APIError) console.error(`The service said ${error.status}: ${error.message}`)
  else if (error instanceof ChatServiceError) console.error(`${error.name}: ${error.message}`)
  else console.error(error)
  process.exitCode = 1
} finally {
  await close()
}
