// Profiling driver: runs ONE contender of the per-request benchmark (or a full iteration) in this
// process against the fake service in another, so that `node --cpu-prof` sees only the client.
//   npx node --cpu-prof --cpu-prof-dir bench/results/profiles bench/profile.ts --contender sdk|sdk-ka|raw|raw-ka|axios --concurrency 32 --requests 20000
//   npx node --cpu-prof --cpu-prof-dir bench/results/profiles bench/profile.ts --iterate --messages 100000 --prefetch 4
//   npx node bench/profile-summary.ts bench/results/profiles/<file>.cpuprofile
import { parseArgs } from 'node:util'
import { spawnFake } from '../scripts/spawn-fake.ts'
import { axiosClient, rawUndici, sdk } from './contenders.ts'
import { iterateAll } from './iteration.ts'
import { timedBlock } from './per-request.ts'
import { ChatServiceClient } from '../src/index.ts'

const { values } = parseArgs({
  options: {
    contender: { type: 'string', default: 'sdk' },
    concurrency: { type: 'string', default: '32' },
    requests: { type: 'string', default: '20000' },
    iterate: { type: 'boolean', default: false },
    messages: { type: 'string', default: '100000' },
    prefetch: { type: 'string', default: '0' },
    'latency-ms': { type: 'string', default: '0' },
  },
})

if (values.iterate) {
  const messages = Number(values.messages)
  const server = await spawnFake(['--conversations', '1', '--messages', String(messages), '--latency-ms', values['latency-ms']])
  const client = new ChatServiceClient({ baseUrl: server.url, keyId: server.keyId, keySecret: server.keySecret, logLevel: 'warn' })
  try {
    const wall = await iterateAll(
      client,
      server,
      { rounds: 1, messages, limit: 100, prefetch: [], previewFix: [], runBudgetMs: 300_000 },
      Number(values.prefetch),
    )
    console.log(`iterated ${messages} messages with prefetch ${values.prefetch} in ${(wall / 1000).toFixed(2)} s`)
  } finally {
    await client.close()
    await server.stop()
  }
} else {
  const server = await spawnFake(['--agents', '20', '--latency-ms', values['latency-ms']])
  const makers = {
    raw: () => rawUndici(server),
    'raw-ka': () => rawUndici(server, true),
    sdk: () => sdk(server),
    'sdk-ka': () => sdk(server, true),
    axios: () => axiosClient(server),
  }
  const make = makers[values.contender as keyof typeof makers] as (() => ReturnType<typeof rawUndici>) | undefined
  if (make === undefined) throw new Error(`--contender must be one of ${Object.keys(makers).join(', ')}`)
  const contender = make()
  try {
    const r = await timedBlock(contender, Number(values.requests), Number(values.concurrency), 300_000)
    console.log(
      `${contender.name}: ${r.completed} calls at ${values.concurrency} concurrent: p50 ${(r.p50 * 1000).toFixed(0)} µs, p99 ${(r.p99 * 1000).toFixed(0)} µs, ${r.rps.toFixed(0)} req/s`,
    )
  } finally {
    await contender.close()
    await server.stop()
  }
}
