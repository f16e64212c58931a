// examples/distributed-export/: under the fake's rate limit, the 429 pause shared through Redis
// (`rateLimitStore`) makes the workers stop together: far fewer requests during the pause than when
// each one pauses on its own. (kit.ts: how the example runs here.)
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import { linesOf, SHARDS, until, useDistributedExport } from './kit.ts'

const kit = useDistributedExport()

describe('examples/distributed-export: BullMQ workers on a real Redis', () => {
  it(
    'a 429 one worker meets pauses every worker through the Redis store (and only its own worker without it)',
    { timeout: 120_000 },
    async () => {
      // 600 conversations at 50 ms a request: some 2 s of work for 16 requests in flight, so that
      // without the store the other workers are still sending while the one that met the 429 waits.
      const seed = generateDataset({ seed: 29, conversations: 600, messages: 6_000 })
      const sentInPause: Record<string, number> = {}
      for (const store of ['off', 'on']) {
        const fake = createFakeChatService({ seed, latencyMs: 50 })
        const server = await kit.serve(fake)
        const env = kit.environment(server, `pause-${store}`, { EXPORT_RATE_LIMIT_STORE: store })
        const workers = await kit.startWorkers(env)
        const out = join(kit.dir, `pause-${store}`)
        const producer = kit.start('producer.ts', ['--out', out, '--shards', String(SHARDS), '--night', 'n1'], env)
        await until(() => fake.requests.length >= 60, kit.allOutput)
        // One worker's next message page gets a 429 asking for 3 s.
        fake.failNext(1, {
          status: 429,
          headers: { 'retry-after': '3' },
          match: { method: 'GET', path: /^\/rest\/v1\/conversations\/[^/]+\/messages$/ },
        })
        const exit = await producer.exit
        expect(exit, exit.output).toMatchObject({ code: 0, signal: null })
        expect(await linesOf(out, 'n1')).toHaveLength(6_000) // every message, the 429 notwithstanding
        const refused = fake.requests.findIndex((request) => request.status === 429)
        expect(refused).toBeGreaterThan(0)
        // When each request reached the fake (its own record's receive time: a sampler polling the
        // log every 5 ms stamped late whenever the loaded test process was late).
        const pausedAt = fake.requests[refused]!.time
        // Between 0.6 s and 2.4 s after it (the pause lasts 3 s from when the worker read the 429;
        // the others read the store at least every 100 ms): requests sent by anyone.
        sentInPause[store] = fake.requests.filter((request) => request.time > pausedAt + 600 && request.time < pausedAt + 2_400).length
        for (const worker of workers) worker.child.kill('SIGTERM')
        await Promise.all(workers.map((worker) => worker.exit))
      }
      expect(sentInPause['off']).toBeGreaterThan(50) // the other three workers went on
      expect(sentInPause['on']).toBe(0) // all four waited
    },
  )
})
