// What the producer reads and changes of a night that already exists in Redis: why it failed (each
// failed shard's reason, stalls, attempts and saved position), and resuming it (the failed shards
// from where they stood, then the night).
import type { Job, Queue } from 'bullmq'
import { nightJobId, settings, shardJobId, type NightResult, type ShardJobData, type ShardResult } from './config.ts'

type NightJob = Job<{ night: string; count: number }, NightResult>
type ShardJob = Job<ShardJobData, ShardResult>

/** The queues of a night. */
export interface NightQueues {
  readonly nights: Queue<{ night: string; count: number }, NightResult>
  readonly shards: Queue<ShardJobData, ShardResult>
}

/** The shard jobs of a night that failed for good, by index. */
async function failedShards(queues: NightQueues, night: string, count: number): Promise<ShardJob[]> {
  const jobs = await Promise.all(Array.from({ length: count }, (_, index) => queues.shards.getJob(shardJobId(night, { index, count }))))
  const failed: ShardJob[] = []
  for (const job of jobs) if (job !== undefined && (await job.getState()) === 'failed') failed.push(job)
  return failed
}

/** Why one shard job failed, in words: its reason, stalls, attempts, and where it stood. */
function describeShard(job: ShardJob): string {
  const { shard, saved, out } = job.data
  const lines = [`shard ${shard.index}/${shard.count} (job ${job.id ?? '?'}) failed: ${job.failedReason}`]
  if (job.stalledCounter > settings.maxStalledCount) {
    lines.push(
      `  it stalled ${job.stalledCounter} times (the worker running it died, or lost the job's lock, each time; ` +
        `EXPORT_MAX_STALLED_COUNT allows ${settings.maxStalledCount}): look at what stopped those workers (out of memory? killed?)`,
    )
  } else if (job.stalledCounter > 0) {
    lines.push(`  it stalled ${job.stalledCounter} time(s) before`)
  }
  lines.push(`  attempts made: ${job.attemptsMade} of ${job.opts.attempts ?? 1}`)
  lines.push(
    saved === null
      ? `  nothing saved: it starts ${out} over`
      : `  saved: ${saved.written} messages, the first ${saved.bytes} bytes of ${out}: a retry goes on from there`,
  )
  return lines.join('\n')
}

/**
 * The message of a night whose parent job failed: each failed shard (see `describeShard`), how many
 * finished, and how to resume.
 */
export async function describeFailedNight(queues: NightQueues, night: string, count: number, command: string): Promise<string> {
  const parent = (await queues.nights.getJob(nightJobId(night))) as NightJob | undefined
  const failed = await failedShards(queues, night, count)
  const head = `night ${night} failed: ${failed.length === 0 ? (parent?.failedReason ?? 'no reason kept') : `${failed.length} of ${count} shards failed for good`}`
  const shards = failed.map(describeShard)
  const resume =
    'To resume: fix the cause, then run the same command again; it retries the failed shards from where they stood ' +
    '(what they wrote is kept), then finishes the night:\n' +
    `  ${command}`
  return [head, ...shards, resume].join('\n')
}

/**
 * Resumes a night whose parent job failed: retries its failed shard jobs (from the position saved
 * in each, with their attempts counted afresh), then the parent, which waits for them
 * (night-job.ts). Returns what it retried, for the log.
 */
export async function resumeFailedNight(queues: NightQueues, parent: NightJob): Promise<string[]> {
  const { night, count } = parent.data
  const failed = await failedShards(queues, night, count)
  // The shards first: the parent, once retried, must find them pending again.
  for (const job of failed) await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true })
  await parent.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true })
  return failed.map((job) => {
    const { shard, saved } = job.data
    return `shard ${shard.index}/${shard.count} ${saved === null ? 'from its start' : `from ${saved.written} messages saved`}`
  })
}
