// examples/distributed-export/: Redis with AOF that stays down past EXPORT_REDIS_DOWN_MS ends the
// producer's wait; back, the night goes on and completes exactly. (kit.ts: how the example runs
// here.)
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import { startRedis } from '../../../scripts/redis.ts'
import { COMPANY, expectExactly, FAST, referenceExport, SHARDS, stopWorkers, until, useDistributedExport } from './kit.ts'

const kit = useDistributedExport()

describe('examples/distributed-export: BullMQ workers on a real Redis', () => {
  it(
    'Redis with AOF: down longer than EXPORT_REDIS_DOWN_MS, the producer stops waiting and says so; back, the night goes on, and waited for again it completes exactly',
    { timeout: 120_000 },
    async () => {
      const aofDir = await mkdtemp(join(tmpdir(), 'distributed-export-aof-'))
      const durable = await startRedis({ appendOnlyDir: aofDir })
      kit.cleanup(async () => {
        await durable.stop()
        await rm(aofDir, { recursive: true, force: true })
      })
      const seed = generateDataset({ seed: 37, conversations: 120, messages: 6_000 })
      const fake = createFakeChatService({ seed, latencyMs: 10 })
      const server = await kit.serve(fake)
      const env = kit.environment(server, 'aof', FAST, durable.url)
      const out = join(kit.dir, 'aof')
      const reference = await referenceExport(server)
      fake.clearRequests()
      const heldPath = `/rest/v1/conversations/${fake.listConversations(COMPANY)[60]!.id}/messages`
      fake.failNext(1, { delayMs: 4_000, match: { method: 'GET', path: heldPath } })

      const workers = await kit.startWorkers(env)
      const args = ['--out', out, '--shards', String(SHARDS), '--night', 'n1']
      const producer = kit.start('producer.ts', args, env)
      await until(
        () => fake.requests.some((request) => request.path === heldPath) && kit.allOutput().includes('of n1: saved'),
        kit.allOutput,
      )
      await durable.stop()

      const gaveUp = await producer.exit
      expect(gaveUp.code, gaveUp.output).toBe(1)
      expect(gaveUp.output).toContain(`night n1: Redis (${durable.url}) has not answered for 2000 ms`)
      expect(gaveUp.output).toContain('Run the same command again to wait for the night')
      expect(gaveUp.output).not.toContain('keeps no copy of its data on disk') // AOF: no warning

      // Back with its AOF: the workers go on by themselves; the producer, run again, waits for the night.
      await durable.restart()
      await kit.night(env, 'n1', out)
      await expectExactly(out, 'n1', reference, kit.allOutput)
      await stopWorkers(workers)
    },
  )
})
