// Starts a night: one BullMQ flow, a parent job for the night and one child job per shard, then
// waits until the night is done (every shard, then the parent) and prints what it wrote.
//   producer.ts --out DIR [--shards 4] [--night NAME]    (NAME: today's date by default)
// Running it again for the same night adds nothing (the job ids are the night's), and waits again;
// for a night that failed, it retries the failed shards from where they stood, then the night.
// It never waits in silence: it prints the shards done, and ends with exit status 1, saying what
// was lost and how to resume, when the night fails, when Redis comes back without the night's jobs,
// or when Redis does not answer for EXPORT_REDIS_DOWN_MS (README.md, "When Redis fails").
import { resolve } from 'node:path'
import { mkdirSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { FlowProducer, Queue, QueueEvents, type Job } from 'bullmq'
import { MAX_SHARDS } from 'chat-service-sdk'
import {
  checkpointsKey,
  connect,
  NIGHT_QUEUE,
  nightJobId,
  settings,
  SHARD_QUEUE,
  shardJobId,
  type NightCheckpoints,
  type NightResult,
  type ShardJobData,
  type ShardResult,
} from './config.ts'
import { describeFailedNight, resumeFailedNight, type NightQueues } from './night-state.ts'
import { watchNight, type NightOutcome } from './night-watch.ts'
import { persistenceWarnings, redisIdentity, safeUrl } from './redis-info.ts'

const { values } = parseArgs({ options: { out: { type: 'string' }, shards: { type: 'string', default: '4' }, night: { type: 'string' } } })
const count = Number(values.shards)
if (values.out === undefined || !Number.isInteger(count) || count < 1 || count > MAX_SHARDS) {
  process.stderr.write('usage: producer.ts --out DIR [--shards N (1-65536, default 4)] [--night NAME]\n')
  process.exit(2)
}
const night = values.night ?? new Date().toISOString().slice(0, 10)
if (!/^[\w.-]+$/.test(night)) throw new Error(`--night: letters, digits, '_', '.' and '-' only (it names files and job ids): ${night}`)
const out = resolve(values.out)
mkdirSync(out, { recursive: true })
/** This very command, for the messages that say how to resume. */
const again = `npm run distributed-export:night -- --out ${values.out} --shards ${count} --night ${night}`
const say = (line: string): void => void process.stdout.write(`night ${night}: ${line}\n`)
const warn = (line: string): void => void process.stderr.write(`night ${night}: ${line}\n`)

const redis = connect()
const connection = { connection: redis, prefix: settings.prefix }
const queues: NightQueues = {
  nights: new Queue<{ night: string; count: number }, NightResult>(NIGHT_QUEUE, connection),
  shards: new Queue<ShardJobData, ShardResult>(SHARD_QUEUE, connection),
}
const listening = redis.duplicate() // QueueEvents blocks on its connection: one of its own
const events = new QueueEvents(NIGHT_QUEUE, { connection: listening, prefix: settings.prefix })
const flows = new FlowProducer(connection)
// Connection errors (Redis restarting, unreachable) are the watch's to judge: kept for its message, not printed one by one.
let lastError: string | undefined
const keepError = (error: Error): void => {
  lastError = error.message
}
redis.on('error', keepError)
listening.on('error', keepError)
queues.nights.on('error', keepError)
queues.shards.on('error', keepError)
events.on('error', keepError)
flows.on('error', keepError)
const watching = new AbortController()
try {
  const parentId = nightJobId(night)
  const identity = await redisIdentity(redis)
  for (const line of persistenceWarnings(identity, safeUrl(settings.redisUrl))) warn(line)
  const running = (await queues.nights.getJobs(['waiting-children', 'wait', 'active', 'delayed'])).filter((job) => job.id !== parentId)
  if (running.length > 0) {
    // Its checkpoints are not saved yet: this night would read everything since the one before.
    throw new Error(`night ${running.map((job) => job.data.night).join(', ')} is not finished yet; run this one after it`)
  }
  const hadCheckpoints = (await redis.exists(checkpointsKey())) === 1
  const existing = await queues.nights.getJob(parentId)
  if (existing !== undefined && existing.data.count !== count) {
    throw new Error(`night ${night} was started with ${existing.data.count} shards: run it again with --shards ${existing.data.count}`)
  }
  await events.waitUntilReady()
  let job: Job<{ night: string; count: number }, NightResult>
  if (existing !== undefined && (await existing.getState()) === 'failed') {
    const retried = await resumeFailedNight(queues, existing)
    say(`resuming a failed night: ${retried.length === 0 ? 'no shard failed' : `retrying ${retried.join(', ')}`}`)
    job = existing
  } else {
    job = await addNight(parentId)
  }
  const outcome = await Promise.race([
    job.waitUntilFinished(events).then(
      (result: NightResult): NightOutcome => ({ kind: 'completed', result }),
      (): NightOutcome => ({ kind: 'failed' }),
    ),
    watchNight({
      redis,
      queues,
      night,
      count,
      runId: identity.runId,
      checkpointsKey: checkpointsKey(),
      hadCheckpoints,
      lastError: () => lastError,
      say,
      signal: watching.signal,
    }),
  ])
  if (outcome.kind === 'completed') say(`done: ${outcome.result.written} messages in ${outcome.result.files.join(', ')}`)
  else {
    process.stderr.write(`${await explain(outcome)}\n`)
    process.exitCode = 1
  }
} catch (error) {
  warn(error instanceof Error ? error.message : String(error))
  process.exitCode = 1
} finally {
  watching.abort()
  // BullMQ leaves connections it was given open; QueueEvents' blocks on a read, so it goes first.
  listening.disconnect()
  // Bounded: closing waits for Redis, which may be the thing that is gone. The bound's timer is
  // cancelled once closing is done: left running, it held every run's exit for the whole 2 s.
  const bound = new AbortController()
  const closing = Promise.all([events.close(), queues.nights.close(), queues.shards.close(), flows.close()]).then(
    () => true,
    () => false, // a close that fails (Redis gone) ends as the bound does
  )
  const closed = await Promise.race([closing, sleep(2_000, false, { signal: bound.signal }).catch(() => false)])
  bound.abort()
  redis.disconnect()
  // The connections BullMQ made itself would go on trying to reach a Redis that is gone.
  if (!closed) process.exit()
}

/** Adds the night's flow (nothing, when it exists: the ids are the night's) and returns its parent job. */
async function addNight(parentId: string): Promise<Job<{ night: string; count: number }, NightResult>> {
  // The last finished night's checkpoints: each shard starts from its own, or, when the shard
  // count changed, from all of them (listNew merges them and keeps its shard's conversations).
  const text = await redis.get(checkpointsKey())
  const last = text === null ? null : (JSON.parse(text) as NightCheckpoints)
  const since = (index: number): ShardJobData['since'] =>
    last === null ? null : last.count === count ? (last.checkpoints[index] ?? null) : last.checkpoints
  say(last === null ? 'a first night, every message' : `the messages added since night ${last.night}`)
  const flow = await flows.add({
    name: 'night',
    queueName: NIGHT_QUEUE,
    data: { night, count },
    opts: { jobId: parentId, attempts: 5, backoff: { type: 'exponential', delay: 1_000 } },
    children: Array.from({ length: count }, (_, index) => ({
      name: 'shard',
      queueName: SHARD_QUEUE,
      data: {
        night,
        shard: { index, count },
        out: `${out}/${night}-shard-${index}-of-${count}.jsonl`,
        since: since(index),
        saved: null,
      } satisfies ShardJobData,
      opts: {
        jobId: shardJobId(night, { index, count }),
        attempts: 5, // failures (a 5xx after the SDK's own retries, a lost connection) resume from the saved position
        backoff: { type: 'exponential', delay: 1_000 },
        failParentOnFailure: true, // a shard that fails for good fails the night, rather than leave it waiting
      },
    })),
  })
  return flow.job
}

/** What went wrong, what was lost, and how to resume. */
async function explain(outcome: Exclude<NightOutcome, { kind: 'completed' }>): Promise<string> {
  const url = safeUrl(settings.redisUrl)
  switch (outcome.kind) {
    case 'failed':
      return describeFailedNight(queues, night, count, again)
    case 'lost':
      return [
        `night ${night} cannot finish: its jobs are gone from Redis (${url}): ${
          outcome.restarted
            ? 'it restarted and came back without them, so it keeps no copy of its data on disk (no AOF or RDB)'
            : 'it was flushed, or evicted them (maxmemory-policy must be noeviction)'
        }.`,
        `Lost with them: where each shard stood (the files in ${out} keep what was written, but nothing says how much of it is whole)` +
          (outcome.checkpointsLost
            ? ', and the checkpoints of the last finished night: the night runs again from nothing, every message written again (repeats of earlier nights, no gap).'
            : '.'),
        'To resume: make Redis keep its data (AOF: README.md, "Redis persistence"), then run the same command again; the night starts over, every shard file rewritten from its start:',
        `  ${again}`,
      ].join('\n')
    case 'unreachable':
      return [
        `night ${night}: Redis (${url}) has not answered for ${outcome.forMs} ms (${outcome.lastError}); stopped waiting.`,
        'The night is in Redis: once Redis is back the workers go on by themselves. Run the same command again to wait for the night (it says so if Redis came back without it):',
        `  ${again}`,
      ].join('\n')
  }
}
