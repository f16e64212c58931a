// What a `rateLimitStore` costs a call when nothing is rate limited (issue 17): the SDK reading one
// page of 20 agents from the fake in another process, sequentially and at 32 in flight, with no
// store, with an in-memory async store (get answers a resolved promise: the cost of the SDK's own
// bookkeeping and the await it adds once per 100 ms), and with an in-memory store answering after
// 1 ms (a Redis round trip on a busy network). Every round runs the three in another order; the
// figures are medians (min–max) over rounds, and the gets the store saw per 1,000 calls.
//   npm run bench:rate-limit-store [-- --rounds N]
import { parseArgs } from 'node:util'
import { ChatServiceClient, type RateLimitStore } from 'chat-service-sdk'
import { spawnFake } from './fake.ts'
import { collectGarbage, fmtSpread, machineInfo, percentile, rotate, spread, table } from './lib.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    sequential: { type: 'string', default: '2000' },
    concurrent: { type: 'string', default: '8000' },
  },
})
const ROUNDS = Number(values.rounds)
const SEQUENTIAL = Number(values.sequential)
const CONCURRENT = Number(values.concurrent)
const CONCURRENCY = 32

interface Counted extends RateLimitStore {
  gets: number
}

function memoryStore(delayMs: number): Counted {
  let value = 0
  const store: Counted = {
    gets: 0,
    get() {
      store.gets++
      if (delayMs === 0) return Promise.resolve(value)
      return new Promise((resolve) => {
        setTimeout(() => {
          resolve(value)
        }, delayMs)
      })
    },
    set(until) {
      value = Math.max(value, until)
      return Promise.resolve()
    },
  }
  return store
}

interface Block {
  latencies: number[]
  wallMs: number
  cpuUs: number
}

async function sequential(client: ChatServiceClient, n: number): Promise<Block> {
  const latencies: number[] = []
  const cpu = process.cpuUsage()
  const start = performance.now()
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await client.agents.list({ limit: 20 })
    latencies.push(performance.now() - t)
  }
  const used = process.cpuUsage(cpu)
  return { latencies, wallMs: performance.now() - start, cpuUs: used.user + used.system }
}

async function concurrent(client: ChatServiceClient, n: number): Promise<Block> {
  const latencies: number[] = []
  let next = 0
  const cpu = process.cpuUsage()
  const start = performance.now()
  const worker = async (): Promise<void> => {
    while (next++ < n) {
      const t = performance.now()
      await client.agents.list({ limit: 20 })
      latencies.push(performance.now() - t)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const used = process.cpuUsage(cpu)
  return { latencies, wallMs: performance.now() - start, cpuUs: used.user + used.system }
}

const server = await spawnFake()
const names = ['no store', 'async store, 0 ms', 'async store, 1 ms'] as const
type Name = (typeof names)[number]
const stores: Record<Name, Counted | undefined> = {
  'no store': undefined,
  'async store, 0 ms': memoryStore(0),
  'async store, 1 ms': memoryStore(1),
}
const clients = Object.fromEntries(
  names.map((name) => {
    const store = stores[name]
    const client = new ChatServiceClient({
      baseUrl: server.url,
      keyId: server.keyId,
      keySecret: server.keySecret,
      logLevel: 'warn',
      ...(store === undefined ? {} : { rateLimitStore: store }),
    })
    return [name, client]
  }),
) as Record<Name, ChatServiceClient>

const results: Record<Name, { seqP50: number[]; seqRps: number[]; conP50: number[]; conRps: number[]; cpuUs: number[]; calls: number }> =
  Object.fromEntries(names.map((name) => [name, { seqP50: [], seqRps: [], conP50: [], conRps: [], cpuUs: [], calls: 0 }])) as never

try {
  for (const name of names) {
    await sequential(clients[name], 300)
    await concurrent(clients[name], 1000)
  }
  for (const name of names) {
    const store = stores[name]
    if (store !== undefined) store.gets = 0
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of rotate(names, round)) {
      collectGarbage()
      const seq = await sequential(clients[name], SEQUENTIAL)
      collectGarbage()
      const con = await concurrent(clients[name], CONCURRENT)
      const r = results[name]
      r.seqP50.push(percentile(seq.latencies, 50) * 1000)
      r.seqRps.push((SEQUENTIAL / seq.wallMs) * 1000)
      r.conP50.push(percentile(con.latencies, 50) * 1000)
      r.conRps.push((CONCURRENT / con.wallMs) * 1000)
      r.cpuUs.push(con.cpuUs / CONCURRENT)
      r.calls += SEQUENTIAL + CONCURRENT
    }
  }
} finally {
  await Promise.all(names.map((name) => clients[name].close()))
  await server.stop()
}

const machine = machineInfo()
console.log(
  `Node ${machine.node}, ${machine.parallelism} cores (${machine.cpu}); ${ROUNDS} rounds of ${SEQUENTIAL} sequential and ${CONCURRENT} calls at ${CONCURRENCY} in flight`,
)
console.log(
  table(
    [
      'contender',
      'sequential p50 µs',
      'sequential calls/s',
      `${CONCURRENCY} in flight p50 µs`,
      `${CONCURRENCY} in flight calls/s`,
      'client CPU µs/call (in flight)',
      'get() per 1,000 calls',
    ],
    names.map((name) => {
      const r = results[name]
      const gets = stores[name]?.gets
      return [
        name,
        fmtSpread(spread(r.seqP50), 0),
        fmtSpread(spread(r.seqRps), 0),
        fmtSpread(spread(r.conP50), 0),
        fmtSpread(spread(r.conRps), 0),
        fmtSpread(spread(r.cpuUs), 1),
        gets === undefined ? '' : ((gets / r.calls) * 1000).toFixed(2),
      ]
    }),
  ),
)
