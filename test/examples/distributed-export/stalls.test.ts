// examples/distributed-export/: a shard whose worker dies more often than maxStalledCount fails the
// night, and the producer says which, why, and how to resume; running it again resumes exactly.
// (kit.ts: how the example runs here.)
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import {
  COMPANY,
  expectExactly,
  FAST,
  referenceExport,
  runnerOf,
  shardOf,
  SHARDS,
  type Started,
  stopWorkers,
  until,
  useDistributedExport,
} from './kit.ts'

const kit = useDistributedExport()

describe('examples/distributed-export: BullMQ workers on a real Redis', () => {
  it(
    'a shard whose worker dies more often than maxStalledCount fails the night: the producer says which shard, why, its stalls and saved position, and how to resume; run again, the night is exact',
    { timeout: 120_000 },
    async () => {
      const seed = generateDataset({ seed: 23, conversations: 120, messages: 6_000 })
      const fake = createFakeChatService({ seed, latencyMs: 10 })
      const server = await kit.serve(fake)
      // One stall allowed: the second fails the shard.
      const env = kit.environment(server, 'stall', { ...FAST, EXPORT_MAX_STALLED_COUNT: '1' })
      const out = join(kit.dir, 'stall')
      const reference = await referenceExport(server)
      fake.clearRequests()

      // Shard 0's pages of two conversations, at 2/5 and 4/5 of the shard, are held back: a kill at each.
      const victim = 0
      const mine = fake.listConversations(COMPANY).filter((conversation) => shardOf(conversation.id, SHARDS) === victim)
      const heldPaths = [0.4, 0.8].map((at) => `/rest/v1/conversations/${mine[Math.floor(mine.length * at)]!.id}/messages`)
      for (const path of heldPaths) fake.failNext(1, { delayMs: 30_000, match: { method: 'GET', path } })

      const workers = await kit.startWorkers(env, SHARDS + 1)
      const args = ['--out', out, '--shards', String(SHARDS), '--night', 'n1']
      const producer = kit.start('producer.ts', args, env)
      const killed: Started[] = []
      for (const path of heldPaths) {
        await until(() => fake.requests.some((request) => request.path === path), kit.allOutput)
        await until(
          () =>
            runnerOf(workers, victim, 'n1', killed)?.lines.some((line) => line.includes(`shard ${victim}/${SHARDS} of n1: saved`)) === true,
          kit.allOutput,
        )
        const runner = runnerOf(workers, victim, 'n1', killed)!
        runner.child.kill('SIGKILL')
        await runner.exit
        killed.push(runner)
      }

      const failed = await producer.exit
      expect(failed.code, failed.output).toBe(1)
      const message = failed.output
      expect(message).toContain('night n1 failed: 1 of 4 shards failed for good')
      expect(message).toContain(
        `shard ${victim}/${SHARDS} (job night-n1-shard-${victim}-of-${SHARDS}) failed: job stalled more than allowable limit`,
      )
      expect(message).toContain(
        "it stalled 2 times (the worker running it died, or lost the job's lock, each time; EXPORT_MAX_STALLED_COUNT allows 1)",
      )
      expect(message).toMatch(
        new RegExp(
          `saved: [1-9]\\d* messages, the first [1-9]\\d* bytes of ${out}/n1-shard-${victim}-of-${SHARDS}\\.jsonl: a retry goes on from there`,
        ),
      )
      expect(message).toContain(`To resume: fix the cause, then run the same command again`)
      expect(message).toContain(`npm run distributed-export:night -- --out ${out} --shards ${SHARDS} --night n1`)

      // Run again: the failed shard goes on from its saved position, then the night completes.
      const saved = Number(/saved: (\d+) messages/.exec(message)?.[1])
      const output = await kit.night(env, 'n1', out)
      expect(output).toContain(`night n1: resuming a failed night: retrying shard ${victim}/${SHARDS} from ${saved} messages saved`)
      expect(kit.allOutput()).toContain(`shard ${victim}/${SHARDS} of n1: resuming after ${saved} messages`)
      await expectExactly(out, 'n1', reference, kit.allOutput)
      await stopWorkers(workers)
    },
  )
})
