// The parent of a night's shard jobs. BullMQ runs it once every shard job has completed: it keeps
// the shards' checkpoints where the next night's producer reads them, and sums up the night.
import { WaitingChildrenError, type Job } from 'bullmq'
import type { Redis } from 'ioredis'
import { checkpointsKey, type NightCheckpoints, type NightResult, type ShardResult } from './config.ts'

export async function finishNight(
  redis: Redis,
  job: Job<{ night: string; count: number }, NightResult>,
  token: string | undefined,
): Promise<NightResult> {
  // A night resumed after a shard failed (the producer retries the failed shards, then the night):
  // the retried shards may still be running. Wait for them; BullMQ runs this again once they are done.
  if (token !== undefined && (await job.moveToWaitingChildren(token))) throw new WaitingChildrenError()
  const results = Object.values(await job.getChildrenValues<ShardResult>())
  const checkpoints = results.toSorted((a, b) => a.shard.index - b.shard.index).map((result) => result.checkpoint)
  if (checkpoints.length !== job.data.count)
    throw new Error(`night ${job.data.night}: ${checkpoints.length} shard results, expected ${job.data.count}`)
  // Written again by a retried attempt with the same value: nothing else reads it before the night completes.
  const saved: NightCheckpoints = { night: job.data.night, count: job.data.count, checkpoints }
  await redis.set(checkpointsKey(), JSON.stringify(saved))
  return {
    night: job.data.night,
    written: results.reduce((sum, result) => sum + result.written, 0),
    files: results.map((result) => result.out).toSorted(),
  }
}
