// Schema cost: time to validate one 100-item page with the SDK's zod schemas (messages, customer
// users; and the 20-agent page of the per-request benchmark), next to JSON.parse of the same bytes
// and to a whole SDK request for that page. Also: building the page schema and validating with it,
// which is what src/pagination/list.ts did on every list() call before issue 5's fix 2 (the reference).
// The schemas are internal since 0.2 (not exported by the package), so this one benchmark imports
// them from src/schemas/ through Node's type stripping: it times a component, not the public API;
// the same code is bundled into dist/. If they move, follow them.
import type { Dispatcher } from 'undici'
import * as z from 'zod'
import { ChatServiceClient } from 'chat-service-sdk'
import { agentSchema } from '../src/schemas/agent.ts'
import { paginationSchema } from '../src/schemas/common.ts'
import { customerUserSchema } from '../src/schemas/customer-user.ts'
import { messageConversationSchema, messageSchema } from '../src/schemas/message.ts'
import type { ServerInfo } from './fake.ts'
import { credentialsBody, floorAgent, floorHeaders } from './floor.ts'
import { collectGarbage, Deadline, median, percentile, rotate, spread, type Spread } from './lib.ts'

export interface SchemaConfig {
  rounds: number
  /** Operations per timed batch (CPU-only work). */
  ops: number
  /** Requests per round for the request-time comparison. */
  requests: number
  batchBudgetMs: number
}

export interface SchemaFigures {
  page: string
  bytes: number
  jsonParseUs: Spread
  validateUs: Spread
  /** Building the list schema and validating with it: what list() did on every call before its schemas were built once. */
  buildAndValidateUs: Spread
  sdkRequestP50Us: Spread
  rawRequestP50Us: Spread
  /** validateUs / sdkRequestP50Us, per round. */
  share: Spread
}

/** The page's bytes as text, read on the raw-undici floor (bench/floor.ts). */
async function rawText(server: ServerInfo, dispatcher: Dispatcher, path: string): Promise<string> {
  const response = await dispatcher.request({
    origin: server.url,
    path,
    method: 'GET',
    headers: floorHeaders,
    body: credentialsBody(server),
    reset: false,
  })
  const text = await response.body.text()
  if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode} for ${path}: ${text}`)
  return text
}

/** Mean µs per call of `fn` over up to `ops` calls (fewer if the budget runs out). */
function perOp(fn: () => unknown, ops: number, budgetMs: number): number {
  const deadline = new Deadline(budgetMs, 'schema batch')
  let done = 0
  const started = performance.now()
  while (done < ops && !deadline.passed) {
    fn()
    done++
  }
  return ((performance.now() - started) / done) * 1000
}

async function requestP50(call: () => Promise<unknown>, count: number, budgetMs: number): Promise<number> {
  const deadline = new Deadline(budgetMs, 'schema request block')
  const latencies: number[] = []
  for (let i = 0; i < count && !deadline.passed; i++) {
    const started = performance.now()
    await call()
    latencies.push((performance.now() - started) * 1000)
  }
  return percentile(latencies, 50)
}

export async function schemaCost(server: ServerInfo, config: SchemaConfig, log: (line: string) => void): Promise<SchemaFigures[]> {
  const dispatcher = floorAgent()
  const client = new ChatServiceClient({ baseUrl: server.url, keyId: server.keyId, keySecret: server.keySecret, logLevel: 'warn' })
  const messagesPath = `/rest/v1/conversations/${encodeURIComponent(server.conversationId)}/messages?page=1&limit=100`
  const usersPath = '/rest/v1/customer-users?page=1&limit=100'
  const cases = [
    {
      page: '20 agents (the per-request page)',
      path: '/rest/v1/agents?page=1&limit=20',
      items: 20,
      build: () => z.object({ data: z.array(agentSchema()), pagination: paginationSchema() }),
      sdkCall: () => client.agents.list({ limit: 20 }),
    },
    {
      page: '100 messages',
      path: messagesPath,
      items: 100,
      build: () => z.object({ data: z.array(messageSchema()), pagination: paginationSchema(), conversation: messageConversationSchema() }),
      sdkCall: () => client.conversations.messages.list(server.conversationId, { limit: 100 }),
    },
    {
      page: '100 customer users',
      path: usersPath,
      items: 100,
      build: () => z.object({ data: z.array(customerUserSchema()), pagination: paginationSchema() }),
      sdkCall: () => client.customerUsers.list({ limit: 100 }),
    },
  ]
  try {
    const figures: SchemaFigures[] = []
    for (const c of cases) {
      const text = await rawText(server, dispatcher, c.path)
      const parsed = JSON.parse(text) as { data: unknown[] }
      if (parsed.data.length !== c.items) throw new Error(`${c.page}: the fake returned ${parsed.data.length} items, expected ${c.items}`)
      const schema = c.build()
      const check = schema.safeParse(parsed)
      if (!check.success) throw new Error(`${c.page}: the SDK schema rejects the fake's page: ${check.error.message}`)
      const rawCall = (): Promise<string> => rawText(server, dispatcher, c.path)
      const ops = {
        json: () => JSON.parse(text) as unknown,
        validate: () => schema.safeParse(parsed),
        build: () => c.build().safeParse(parsed),
      }
      // Warm-up (JIT) of every measured operation.
      for (const fn of Object.values(ops)) perOp(fn, Math.min(500, config.ops), config.batchBudgetMs)
      await requestP50(c.sdkCall, 100, config.batchBudgetMs)
      await requestP50(rawCall, 100, config.batchBudgetMs)
      const rounds = { json: [] as number[], validate: [] as number[], build: [] as number[], sdk: [] as number[], raw: [] as number[] }
      for (let round = 0; round < config.rounds; round++) {
        for (const key of rotate(['json', 'validate', 'build'] as const, round)) {
          collectGarbage()
          rounds[key].push(perOp(ops[key], config.ops, config.batchBudgetMs))
        }
        for (const [key, call] of rotate([['sdk', c.sdkCall] as const, ['raw', rawCall] as const], round)) {
          collectGarbage()
          rounds[key].push(await requestP50(call, config.requests, config.batchBudgetMs))
        }
      }
      figures.push({
        page: c.page,
        bytes: Buffer.byteLength(text),
        jsonParseUs: spread(rounds.json),
        validateUs: spread(rounds.validate),
        buildAndValidateUs: spread(rounds.build),
        sdkRequestP50Us: spread(rounds.sdk),
        rawRequestP50Us: spread(rounds.raw),
        share: spread(rounds.validate.map((v, i) => v / rounds.sdk[i]!)),
      })
      log(`  schema: ${c.page} done (validate ${median(rounds.validate).toFixed(1)} µs)`)
    }
    return figures
  } finally {
    await client.close()
    await dispatcher.close()
  }
}
