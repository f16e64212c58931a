// examples/distributed-export/: Redis restarted mid-night without persistence: the producer fails
// on its own saying what was lost, and the night run again is exact. (kit.ts: how the example runs
// here.)
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import { startRedis } from '../../../scripts/redis.ts'
import { COMPANY, expectExactly, FAST, referenceExport, SHARDS, stopWorkers, until, useDistributedExport } from './kit.ts'

const kit = useDistributedExport()

describe('examples/distributed-export: BullMQ workers on a real Redis', () => {
  it(
    'Redis restarted without persistence mid-night: the producer stops waiting on its own, says what was lost and how to resume; run again, the night is exact',
    { timeout: 120_000 },
    async () => {
      const volatile = await startRedis()
      kit.cleanup(() => volatile.stop())
      const seed = generateDataset({ seed: 31, conversations: 120, messages: 6_000 })
      const fake = createFakeChatService({ seed, latencyMs: 10 })
      const server = await kit.serve(fake)
      const env = kit.environment(server, 'restart', FAST, volatile.url)
      const out = join(kit.dir, 'restart')
      const reference = await referenceExport(server)

      const workers = await kit.startWorkers(env)
      // Night 1 completes: its checkpoints are in Redis.
      const first = await kit.night(env, 'n1', out)
      expect(first).toContain('keeps no copy of its data on disk (no AOF, no RDB)') // warned before the night
      // Night 2 (everything is new: 2 messages in each conversation) is cut by a restart, one page held back.
      for (const conversation of fake.listConversations(COMPANY)) fake.appendMessages(COMPANY, conversation.id, 2)
      const everything = await referenceExport(server)
      fake.clearRequests()
      const heldPath = `/rest/v1/conversations/${fake.listConversations(COMPANY)[60]!.id}/messages`
      fake.failNext(1, { delayMs: 30_000, match: { method: 'GET', path: heldPath } })
      const args = ['--out', out, '--shards', String(SHARDS), '--night', 'n2']
      const producer = kit.start('producer.ts', args, env)
      await until(
        () => fake.requests.some((request) => request.path === heldPath) && kit.allOutput().includes('of n2: saved'),
        kit.allOutput,
      )
      await volatile.restart()

      // Without the fix it waited forever, printing nothing (this test's timeout).
      const lost = await producer.exit
      expect(lost.code, lost.output).toBe(1)
      expect(lost.output).toContain(
        `night n2 cannot finish: its jobs are gone from Redis (${volatile.url}): it restarted and came back without them`,
      )
      expect(lost.output).toContain(
        'and the checkpoints of the last finished night: the night runs again from nothing, every message written again',
      )
      expect(lost.output).toContain(`npm run distributed-export:night -- --out ${out} --shards ${SHARDS} --night n2`)
      // The workers said why they stopped, and live on for the next run.
      expect(kit.allOutput()).toMatch(/is gone from Redis|is no longer this worker's/)

      // Run again: the night starts over, from nothing (its checkpoints are gone): every message, each once.
      const again = await kit.night(env, 'n2', out)
      expect(again).toContain('night n2: a first night, every message')
      await expectExactly(out, 'n2', everything, kit.allOutput)
      expect(everything.length).toBe(reference.length + 2 * 120)
      await stopWorkers(workers)
    },
  )
})
