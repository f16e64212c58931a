// A bulk sync of customer users (issue 18): bring the service's `metadata.plan` in line with a
// table of N rows, every row different from what is stored, against the fake service (the BUILT
// package, in this process) with a fixed latency per request. Two ways, each with a pool of
// CONCURRENCY workers over the rows:
// - per row: `findByExternalId(row)` then `update` (two requests a row);
// - the README's recipe ("Syncing many users"): list every user once (100 a page, one request after
//   another), index by external_id, then `update` (one request a row).
// Prints wall time and request counts; never fails on a figure.
//   npm run bench:bulk-sync                                     1,000 users, 30 ms, 8 workers
//   npm run bench:bulk-sync -- --users 300 --concurrency 1 --latency-ms 30
import { parseArgs } from 'node:util'
import * as z from 'zod'
import { ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '8' },
    'latency-ms': { type: 'string', default: '30' },
  },
})
const USERS = Number(values.users)
const CONCURRENCY = Number(values.concurrency)
const LATENCY_MS = Number(values['latency-ms'])

const seed = generateDataset({ seed: 1, agents: 1, customerUsers: USERS, conversations: 0, messages: 0 })
const company = seed.companies[0]
const key = company?.keys[0]
if (company === undefined || key === undefined) throw new Error('no company in the generated dataset')
const PLANS = ['free', 'starter', 'pro', 'enterprise']
/** Every row wants a plan other than the stored one. */
const rows = (company.customerUsers ?? []).map((user) => {
  const stored = (user.metadata as { plan?: string } | null)?.plan
  return { id: user.id, externalId: user.external_id, plan: PLANS[(PLANS.indexOf(stored ?? 'free') + 1) % PLANS.length] as string }
})

const fake = createFakeChatService({ seed, latencyMs: LATENCY_MS })
const server = await fake.listen()
const Metadata = z.looseObject({ plan: z.string().optional() })

/** Runs `work` for every row with CONCURRENCY workers (the README's pool). */
async function pool<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    for (let item = items[next++]; item !== undefined; item = items[next++]) await work(item)
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()))
}

async function perRow(users: ReturnType<typeof withMetadata>): Promise<void> {
  await pool(rows, async (row) => {
    const user = await users.findByExternalId(row.externalId)
    if (user !== null && user.metadata.plan !== row.plan) await users.update(user.id, { metadata: { ...user.metadata, plan: row.plan } })
  })
}

async function recipe(users: ReturnType<typeof withMetadata>): Promise<void> {
  const byExternalId = new Map<string, { id: string; metadata: z.output<typeof Metadata> }>()
  for await (const user of users.list({ limit: 100 })) byExternalId.set(user.external_id, user)
  await pool(rows, async (row) => {
    const user = byExternalId.get(row.externalId)
    if (user !== undefined && user.metadata.plan !== row.plan)
      await users.update(user.id, { metadata: { ...user.metadata, plan: row.plan } })
  })
}

function withMetadata(client: ChatServiceClient) {
  return client.customerUsers.withMetadata(Metadata, { onInvalidMetadata: 'skip' })
}

const out = (line = ''): void => void process.stdout.write(`${line}\n`)
out(`bulk sync: ${USERS} users, every row changed, fake at ${LATENCY_MS} ms a request, ${CONCURRENCY} workers (Node ${process.version})`)
for (const [name, run] of [
  ['findByExternalId per row', perRow],
  ['list once + update (README)', recipe],
] as const) {
  fake.reset() // every row differs again
  const client = new ChatServiceClient({ baseUrl: server.url, keyId: key.keyId, keySecret: key.keySecret })
  const started = performance.now()
  await run(withMetadata(client))
  const seconds = (performance.now() - started) / 1000
  await client.close()
  const requests = fake.requests.length
  // Checked, not assumed: every user now holds the row's plan.
  const wrong = rows.filter((row) => (fake.getCustomerUser(company.id, row.id)?.metadata as { plan?: string } | null)?.plan !== row.plan)
  out(`${name.padEnd(30)} ${seconds.toFixed(1).padStart(6)} s  ${String(requests).padStart(6)} requests  ${wrong.length} rows not in sync`)
}
await server.close()
