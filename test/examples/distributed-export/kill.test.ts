// examples/distributed-export/: one worker is killed with SIGKILL in the middle of its shard; BullMQ
// finds the job stalled and an idle worker resumes it, within the bound the README states
// (lockDuration + stalledInterval), from the position saved in the job, so the shard files of the
// night hold exactly the messages of a single-process export, each once. The next night writes only
// the messages added since. (kit.ts: how the example runs here.)
import { join } from 'node:path'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createFakeChatService, generateDataset } from 'chat-service-sdk/testing'
import {
  COMPANY,
  expectExactly,
  FAST,
  linesOf,
  referenceExport,
  runnerOf,
  shardOf,
  SHARDS,
  stopWorkers,
  until,
  useDistributedExport,
} from './kit.ts'

const kit = useDistributedExport()

describe('examples/distributed-export: BullMQ workers on a real Redis', () => {
  it(
    'a worker killed mid-shard is picked up by an idle one within lockDuration + stalledInterval, resumed from its saved position; the shards equal one export; the next night only the new',
    { timeout: 120_000 },
    async () => {
      const seed = generateDataset({ seed: 17, conversations: 200, messages: 12_000 })
      // 10 ms a request: a shard takes some 100 ms of pages before the held one, against a save every 20 ms.
      const fake = createFakeChatService({ seed, latencyMs: 10 })
      const server = await kit.serve(fake)
      const env = kit.environment(server, 'kill', FAST)
      const out = join(kit.dir, 'kill')

      const reference = await referenceExport(server)
      expect(reference).toHaveLength(12_000)
      fake.clearRequests() // from here on, the log holds the workers' requests only

      // The victim: shard 0. Its page of a conversation 4/5 of the way through the shard is held back
      // for 30 s, so that shard 0 cannot finish before the kill, and has saved positions before it.
      const victim = 0
      const mine = fake.listConversations(COMPANY).filter((conversation) => shardOf(conversation.id, SHARDS) === victim)
      const held = mine[Math.floor(mine.length * 0.8)]!
      const heldPath = `/rest/v1/conversations/${held.id}/messages`
      fake.failNext(1, { delayMs: 30_000, match: { method: 'GET', path: heldPath } })

      // One worker more than shards: an idle one takes the dead worker's job as soon as it is free.
      const workers = await kit.startWorkers(env, SHARDS + 1)
      const producer = kit.start('producer.ts', ['--out', out, '--shards', String(SHARDS), '--night', 'n1'], env)
      const connection = new Redis(kit.redis.url, { maxRetriesPerRequest: null })
      const shardJobs = new Queue('export-shard', { connection, prefix: 'kill' })
      kit.cleanup(async () => {
        await shardJobs.close()
        connection.disconnect()
      })
      const jobId = `night-n1-shard-${victim}-of-${SHARDS}`
      const savedWritten = async (): Promise<number> =>
        ((await shardJobs.getJob(jobId))?.data as { saved: { written: number } | null } | undefined)?.saved?.written ?? 0
      // Evidence, not a sleep: the held request has come, and the job holds a saved position.
      await until(async () => fake.requests.some((request) => request.path === heldPath) && (await savedWritten()) > 0, kit.allOutput)
      const runner = runnerOf(workers, victim, 'n1')!
      const killedAt = Date.now()
      runner.child.kill('SIGKILL')
      await runner.exit
      const savedAtKill = await savedWritten()
      expect(savedAtKill).toBeGreaterThan(0)
      expect(savedAtKill).toBeLessThan(mine.reduce((sum, conversation) => sum + conversation.message_count, 0))

      const first = await producer.exit
      expect(first, first.output).toMatchObject({ code: 0, signal: null })
      // Another worker took the stalled job and went on from the saved position.
      const resumed = kit.children.filter(
        (started) =>
          started !== runner &&
          started.lines.some((line) => line.includes(`shard ${victim}/${SHARDS} of n1: resuming after ${savedAtKill} messages`)),
      )
      expect(resumed, kit.allOutput()).toHaveLength(1)
      const job = await shardJobs.getJob(jobId)
      expect(job?.stalledCounter).toBe(1)
      // Picked up within the bound README.md states: lockDuration (3 s here) + stalledInterval (1 s),
      // and 3 s for the timers of a loaded machine (CI runs this beside seven other test files and the
      // workers' own processes, on 2 cores). BullMQ's defaults (30 s + 30 s) took up to a minute.
      // processedOn: when the resumed attempt began (the worker's clock, the same machine's).
      const pickedUpAfter = (job?.processedOn ?? Number.POSITIVE_INFINITY) - killedAt
      expect(pickedUpAfter).toBeGreaterThan(0)
      expect(pickedUpAfter, `picked up ${pickedUpAfter} ms after the kill`).toBeLessThanOrEqual(3_000 + 1_000 + 3_000)

      await expectExactly(out, 'n1', reference, kit.allOutput)

      // Night 2: three messages in each of 8 conversations (shard 0's included); only they are written.
      const grown = fake.listConversations(COMPANY).filter((_, index) => index % 25 === 3)
      const added = grown.flatMap((conversation) => fake.appendMessages(COMPANY, conversation.id, 3).map((message) => message.id))
      expect(grown.some((conversation) => shardOf(conversation.id, SHARDS) === victim)).toBe(true)
      await kit.night(env, 'n2', out)
      const n2 = (await linesOf(out, 'n2')).map((line) => (JSON.parse(line) as { id: string }).id)
      expect(n2.toSorted()).toEqual(added.toSorted())
      await stopWorkers(workers)
    },
  )
})
