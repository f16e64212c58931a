// Spending a rate limit (issue 27): the SDK against the fake's limiters, the fake in another
// process at 10 ms a request. Each run is the whole-company export (`listAll`, 16 requests in
// flight, 10 messages a page so that it makes thousands of requests) with a login call
// (`auth.issueToken`) every 200 ms on the same client, as a company server's login path does while
// its nightly export runs. Printed per limiter and pacing mode:
// - useful throughput: requests the service accepted per second of the export, over the limit;
// - 429s: the share of responses that were 429;
// - login p50 / p95 / max: a login call's time, ms;
// - exact: every message of the company once, in order (else how the export ended).
// Statuses are counted at undici's diagnostics channel (every response, retries included).
//
//   npm run bench:pacing [-- --limit 100 --conversations 150 --messages 30000 --only tb-ra]
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { parseArgs } from 'node:util'
import { ChatServiceClient, type Message } from 'chat-service-sdk'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import { spawnJsonChild } from '../spawn.ts'
import { percentile, table } from '../lib.ts'

const { values } = parseArgs({
  options: {
    limit: { type: 'string', default: '100' },
    conversations: { type: 'string', default: '150' },
    messages: { type: 'string', default: '30000' },
    only: { type: 'string' },
    modes: { type: 'string', default: 'adaptive,off' },
  },
})
const LIMIT = Number(values.limit)
const CONVERSATIONS = Number(values.conversations)
const MESSAGES = Number(values.messages)

/** The limiters, as `chat-service-fake` flags. */
const LIMITERS: { id: string; name: string; flags: string[] }[] = [
  { id: 'none', name: 'no limit', flags: [] },
  { id: 'tb-ra', name: `token bucket ${LIMIT}/s, burst ${LIMIT / 5}, Retry-After`, flags: ['--rate-limit', `${LIMIT}/${LIMIT / 5}`] },
  {
    id: 'tb',
    name: `token bucket ${LIMIT}/s, burst ${LIMIT / 5}, no Retry-After`,
    flags: ['--rate-limit', `${LIMIT}/${LIMIT / 5}`, '--rate-limit-retry-after', 'none'],
  },
  { id: 'fw-ra', name: `fixed window ${LIMIT} per 1 s, Retry-After`, flags: ['--rate-limit', `${LIMIT}`, '--rate-limit-window', '1000'] },
  {
    id: 'fw',
    name: `fixed window ${LIMIT} per 1 s, no Retry-After`,
    flags: ['--rate-limit', `${LIMIT}`, '--rate-limit-window', '1000', '--rate-limit-retry-after', 'none'],
  },
  // Token issuance limited on its own within the key pair's limit (the login calls ask 5 a second).
  {
    id: 'tb-login-ra',
    name: `token bucket ${LIMIT}/s, burst ${LIMIT / 5}; logins alone 1/s; Retry-After`,
    flags: ['--rate-limit', `${LIMIT}/${LIMIT / 5}`, '--rate-limit-endpoint', 'POST /rest/v1/auth/token=1'],
  },
  {
    id: 'tb-login',
    name: `token bucket ${LIMIT}/s, burst ${LIMIT / 5}; logins alone 1/s; no Retry-After`,
    flags: [
      '--rate-limit',
      `${LIMIT}/${LIMIT / 5}`,
      '--rate-limit-endpoint',
      'POST /rest/v1/auth/token=1',
      '--rate-limit-retry-after',
      'none',
    ],
  },
]

interface Outcome {
  readonly useful: number
  readonly refused: number
  readonly loginP50: number
  readonly loginP95: number
  readonly loginMax: number
  readonly logins: number
  readonly exact: string
  readonly seconds: number
}

/** The message ids the export must yield, in order (the same seed and sizes as the fake's). */
function expectedIds(): string[] {
  const fake = createFakeChatService({
    seed: generateDataset({ seed: 1, agents: 5, customerUsers: 50, conversations: CONVERSATIONS, messages: MESSAGES }),
  })
  return fake.listConversations('comp_1').flatMap((c) => fake.listMessages('comp_1', c.id).map((m) => m.id))
}

async function run(flags: string[], pacing: 'adaptive' | 'off', expected: readonly string[]): Promise<Outcome> {
  const cli = new URL('../../dist/testing/cli.js', import.meta.url)
  const args = ['--port', '0', '--json', '--latency', '10', '--record-requests', '0']
  const dataset = ['--agents', '5', '--customer-users', '50', '--conversations', String(CONVERSATIONS), '--messages', String(MESSAGES)]
  const fake = await spawnJsonChild<{ baseUrl: string; keyId: string; keySecret: string }>(cli, [...args, ...dataset, ...flags])
  const statuses = new Map<number, number>()
  const onHeaders = (message: unknown): void => {
    const status = (message as { response: { statusCode: number } }).response.statusCode
    statuses.set(status, (statuses.get(status) ?? 0) + 1)
  }
  subscribe('undici:request:headers', onHeaders)
  const client = new ChatServiceClient({ ...fake.info, pacing, logLevel: 'off' })
  const t0 = performance.now()
  const onPacing = (event: unknown): void => {
    if (process.env['TRACE'] !== undefined) console.log(((performance.now() - t0) / 1000).toFixed(2), JSON.stringify(event))
  }
  subscribe('chat-service-sdk:pacing', onPacing)
  const logins: number[] = []
  let exporting = true
  const loginLoop = (async () => {
    while (exporting) {
      const started = performance.now()
      try {
        await client.auth.issueToken({ userId: 'u-login' })
        logins.push(performance.now() - started)
      } catch {
        logins.push(Number.POSITIVE_INFINITY)
      }
      const spent = performance.now() - started
      if (spent < 200) await new Promise((resolve) => setTimeout(resolve, 200 - spent))
    }
  })()
  const started = performance.now()
  let lastOk = 0
  let last429 = 0
  const sampler =
    process.env['TRACE'] === undefined
      ? undefined
      : setInterval(() => {
          const ok = [...statuses].filter(([status]) => status !== 429).reduce((sum, [, n]) => sum + n, 0)
          const refused = statuses.get(429) ?? 0
          console.log(
            ((performance.now() - t0) / 1000).toFixed(1),
            'paced',
            client.pacedRate?.toFixed(0),
            'accepted/s',
            (ok - lastOk) * 2,
            '429/s',
            (refused - last429) * 2,
          )
          lastOk = ok
          last429 = refused
        }, 500)
  const seen: string[] = []
  let ended = 'complete'
  try {
    for await (const message of client.conversations.messages.listAll({ limit: 10, concurrency: 16 }) as AsyncIterable<Message>) {
      seen.push(message.id)
    }
  } catch (error) {
    ended = `${(error as Error).name} after ${seen.length} messages`
  }
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  exporting = false
  await loginLoop
  unsubscribe('undici:request:headers', onHeaders)
  unsubscribe('chat-service-sdk:pacing', onPacing)
  await client.close()
  await fake.stop()
  const accepted = [...statuses].filter(([status]) => status !== 429).reduce((sum, [, n]) => sum + n, 0)
  const refused = statuses.get(429) ?? 0
  const exact =
    ended !== 'complete'
      ? ended
      : seen.length === expected.length && seen.every((id, i) => id === expected[i])
        ? 'yes'
        : `no (${seen.length})`
  const sortedLogins = [...logins].sort((a, b) => a - b)
  return {
    useful: accepted / seconds / LIMIT,
    refused: refused / (accepted + refused),
    loginP50: percentile(sortedLogins, 50),
    loginP95: percentile(sortedLogins, 95),
    loginMax: sortedLogins.at(-1) ?? Number.NaN,
    logins: logins.length,
    exact,
    seconds,
  }
}

const expected = expectedIds()
const modes = values.modes.split(',') as ('adaptive' | 'off')[]
console.log(
  `Pacing: listAll (limit 10, 16 in flight) of ${MESSAGES} messages in ${CONVERSATIONS} conversations (${expected.length / 10 + CONVERSATIONS / 100} requests at least), a login call every 200 ms, 10 ms a request, limit ${LIMIT} requests/s per key pair`,
)
const rows: string[][] = []
for (const limiter of LIMITERS.filter((l) => values.only === undefined || values.only.split(',').includes(l.id))) {
  for (const pacing of modes) {
    const r = await run(limiter.flags, pacing, expected)
    const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(0) : 'failed')
    const row = [
      limiter.name,
      pacing,
      r.useful.toFixed(3),
      `${(r.refused * 100).toFixed(1)} %`,
      `${ms(r.loginP50)} / ${ms(r.loginP95)} / ${ms(r.loginMax)}`,
      String(r.logins),
      r.exact,
      r.seconds.toFixed(1),
    ]
    rows.push(row)
    console.log(row.join(' | '))
  }
}
console.log()
console.log(table(['limiter', 'pacing', 'useful / limit', '429s', 'login p50 / p95 / max (ms)', 'logins', 'exact', 'export s'], rows))
