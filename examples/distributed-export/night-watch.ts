// The producer's watch over a running night, every EXPORT_WATCH_EVERY_MS: the shards done so far,
// and the two ways a night can end without BullMQ ever saying so, which left the producer waiting
// forever in silence: Redis came back without the night's jobs (it restarted without persistence,
// was flushed, or evicted them), or Redis stopped answering. Either ends the wait within a bound
// (README.md, "When Redis fails"); the producer then says what was lost and how to resume.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Redis } from 'ioredis'
import { nightJobId, settings, type NightResult } from './config.ts'
import type { NightQueues } from './night-state.ts'
import { redisRunId } from './redis-info.ts'

/** How a night ended, as the watch saw it. */
export type NightOutcome =
  | { readonly kind: 'completed'; readonly result: NightResult }
  | { readonly kind: 'failed' }
  /**
   * The night's jobs are gone from Redis. `restarted`: Redis has a new run_id since the night
   * began; `checkpointsLost`: the last finished night's checkpoints, there when the night began, are gone too.
   */
  | { readonly kind: 'lost'; readonly restarted: boolean; readonly checkpointsLost: boolean }
  /** Redis did not answer for `forMs`. */
  | { readonly kind: 'unreachable'; readonly forMs: number; readonly lastError: string }

/** What the watch needs. */
export interface WatchOptions {
  readonly redis: Redis
  readonly queues: NightQueues
  readonly night: string
  readonly count: number
  /** Redis's run_id when the night began. */
  readonly runId: string
  /** The key of the last finished night's checkpoints, and whether it was there when the night began. */
  readonly checkpointsKey: string
  readonly hadCheckpoints: boolean
  /** The last error a Redis connection reported, if any (for the message). */
  readonly lastError: () => string | undefined
  /** Told of progress and of a Redis restart the night survived. */
  readonly say: (line: string) => void
  readonly signal: AbortSignal
}

/** Rejects after `ms` (the watch's bound on an unanswered Redis). */
function deadline(ms: number, signal: AbortSignal): Promise<never> {
  return sleep(ms, undefined, { signal }).then(() => Promise.reject(new Error(`no answer in ${ms} ms`)))
}

/** The night's state, its result once completed, and how many shards are done. */
async function readNight(
  queues: NightQueues,
  night: string,
  parent: NonNullable<Awaited<ReturnType<NightQueues['nights']['getJob']>>>,
): Promise<{ state: string; completed: NightResult | undefined; processed: number }> {
  const state = await parent.getState()
  if (state === 'completed') {
    // `parent` was read before the state: if the night completed in between, that copy has no
    // return value yet (null). Completed jobs are kept: read it again.
    const completed = await queues.nights.getJob(nightJobId(night))
    return { state, completed: completed?.returnvalue ?? undefined, processed: 0 }
  }
  const { processed = 0 } = state === 'failed' ? {} : await parent.getDependenciesCount({ processed: true })
  return { state, completed: undefined, processed }
}

/**
 * Watches the night until it ends: resolves with how (also `completed` and `failed`, in case the
 * producer missed BullMQ's event while Redis was away). Rejects only when `signal` aborts.
 */
export async function watchNight(options: WatchOptions): Promise<NightOutcome> {
  const { redis, queues, night, count, signal, say } = options
  let lastAnswer = performance.now()
  let restartSaid = false
  let done = -1
  for (;;) {
    await sleep(settings.watchEveryMs, undefined, { signal })
    const left = settings.redisDownMs - (performance.now() - lastAnswer)
    let parent
    let read: { state: string; completed: NightResult | undefined; processed: number } | undefined
    try {
      // Bounded: a Redis that does not answer leaves these commands queued in ioredis forever.
      const answer = Promise.all([redisRunId(redis), queues.nights.getJob(nightJobId(night))])
      const [runId, job] = await Promise.race([answer, deadline(Math.max(0, left), signal)])
      lastAnswer = performance.now()
      parent = job
      if (runId !== options.runId && !restartSaid) {
        restartSaid = true
        if (parent !== undefined) say(`Redis restarted and kept the night's jobs (it persists them): the night goes on`)
      }
      // What the night's job says, bounded the same way (Redis may stop answering between reads).
      if (parent !== undefined) read = await Promise.race([readNight(queues, night, parent), deadline(settings.redisDownMs, signal)])
    } catch (error) {
      if (signal.aborted) throw error
      if (performance.now() - lastAnswer < settings.redisDownMs) continue // an error of one command: ask again
      return { kind: 'unreachable', forMs: settings.redisDownMs, lastError: options.lastError() ?? String(error) }
    }
    if (parent === undefined) {
      // Workers of the lost night stop within a lock duration of Redis being back (their lock
      // renewals and saves fail): only then is it safe to run the night again over their files.
      await sleep(settings.lockDurationMs, undefined, { signal })
      const checkpointsLost = options.hadCheckpoints && (await redis.exists(options.checkpointsKey)) === 0
      return { kind: 'lost', restarted: restartSaid || (await redisRunId(redis)) !== options.runId, checkpointsLost }
    }
    if (read === undefined) continue
    const { state, completed, processed } = read
    if (state === 'completed') {
      if (completed !== undefined) return { kind: 'completed', result: completed }
      continue
    }
    if (state === 'failed') return { kind: 'failed' }
    if (processed !== done) {
      done = processed
      say(`${processed} of ${count} shards done`)
    }
  }
}
