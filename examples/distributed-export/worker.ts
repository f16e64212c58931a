// A worker process: runs shard jobs (and, when a night's shards are all done, the night's parent
// job) until SIGTERM or Ctrl-C. Start as many as you like, on as many machines as share the output
// folder and the Redis; CHAT_SERVICE_BASE_URL, CHAT_SERVICE_KEY_ID and CHAT_SERVICE_KEY_SECRET
// say which service (README.md in this folder).
import { Worker } from 'bullmq'
import { ChatServiceClient } from 'chat-service-sdk'
import {
  connect,
  NIGHT_QUEUE,
  rateLimitKey,
  settings,
  SHARD_QUEUE,
  type NightResult,
  type ShardJobData,
  type ShardResult,
} from './config.ts'
import { finishNight } from './night-job.ts'
import { safeUrl } from './redis-info.ts'
import { pauseOnly, redisRateLimitStore } from './rate-limit-store.ts'
import { describeRedisError, exportShard, LOCK_LOST, STOPPING } from './shard-job.ts'

const redis = connect()
const store = redisRateLimitStore(redis, rateLimitKey(), settings.rateLimitStoreMaxAgeMs)
const shared = { on: store, pause: pauseOnly(store), off: undefined }[settings.sharedRateLimit]
const client = new ChatServiceClient({ pacing: settings.pacing, ...(shared === undefined ? {} : { rateLimitStore: shared }) })
const say = (line: string): void => void process.stdout.write(`worker ${process.pid}: ${line}\n`)
// A Redis that is down makes every connection report every reconnection: one line per new error.
let lastError: string | undefined
const sayError = (error: Error): void => {
  const text = describeRedisError(error)
  if (text === lastError) return
  lastError = text
  say(`error: ${text}`)
}
redis.on('ready', () => {
  if (lastError !== undefined) say('connected to Redis again')
  lastError = undefined
})
// How soon a dead worker's job moves on, and how many deaths a job survives: config.ts and
// README.md ("Settings") say why these values.
const options = {
  connection: redis,
  prefix: settings.prefix,
  lockDuration: settings.lockDurationMs,
  stalledInterval: settings.stalledIntervalMs,
  maxStalledCount: settings.maxStalledCount,
}

const shards = new Worker<ShardJobData, ShardResult>(
  SHARD_QUEUE,
  (job, token, signal) => {
    const { index, count } = job.data.shard
    return exportShard(client, redis, job, token, signal, (line) => {
      say(`shard ${index}/${count} of ${job.data.night}: ${line}`)
    })
  },
  { ...options, concurrency: settings.jobsPerWorker },
)
// A worker that could not renew a lock (Redis unreachable, the event loop blocked past
// lockDuration) may already have lost the job to another: stop writing its file.
shards.on('lockRenewalFailed', (ids) => {
  for (const id of ids) shards.cancelJob(id, LOCK_LOST)
})
shards.on('failed', (job, error) => {
  say(`job ${job?.id ?? '?'} failed: ${describeRedisError(error)}`)
})
shards.on('error', sayError)

const nights = new Worker<{ night: string; count: number }, NightResult>(
  NIGHT_QUEUE,
  (job, token) => finishNight(redis, job, token),
  options,
)
nights.on('completed', (job) => {
  say(`night ${job.data.night} done: ${job.returnvalue.written} messages in ${job.returnvalue.files.length} files`)
})
nights.on('error', sayError)

/**
 * How long a stop may take, ms. After a Redis restart, ioredis 6.0 may leave a command unanswered
 * forever (ioredis issues 1718 and 2193), and BullMQ's close waits for it: a worker must then still
 * exit, as a process manager's SIGKILL would make it, saying so. Its jobs go back to the queue
 * once their locks expire (lockDuration), as a killed worker's do.
 */
const STOP_BOUND_MS = 10_000

async function stop(signal: string): Promise<void> {
  say(`${signal}: saving and handing the running shard jobs back to the queue`)
  const bound = setTimeout(() => {
    say(
      `could not stop within ${STOP_BOUND_MS} ms (a Redis command was never answered): exiting; its jobs go back to the queue when their locks expire`,
    )
    process.exit(1)
  }, STOP_BOUND_MS)
  shards.cancelAllJobs(STOPPING) // each saves where it stands and goes back to the queue
  await Promise.all([shards.close(), nights.close()])
  await client.close()
  redis.disconnect()
  clearTimeout(bound)
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop(signal))
await Promise.all([shards.waitUntilReady(), nights.waitUntilReady()])
say(`ready (Redis ${safeUrl(settings.redisUrl)}, prefix ${settings.prefix})`)
