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
import { redisRateLimitStore } from './rate-limit-store.ts'
import { exportShard, LOCK_LOST, STOPPING } from './shard-job.ts'

const redis = connect()
const client = new ChatServiceClient({
  ...(settings.sharedRateLimit ? { rateLimitStore: redisRateLimitStore(redis, rateLimitKey(), settings.rateLimitStoreMaxAgeMs) } : {}),
})
const say = (line: string): void => void process.stdout.write(`worker ${process.pid}: ${line}\n`)
const options = {
  connection: redis,
  prefix: settings.prefix,
  lockDuration: settings.lockDurationMs,
  stalledInterval: settings.stalledIntervalMs,
}

const shards = new Worker<ShardJobData, ShardResult>(
  SHARD_QUEUE,
  (job, token, signal) => {
    const { index, count } = job.data.shard
    return exportShard(client, job, token, signal, (line) => {
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
  say(`job ${job?.id ?? '?'} failed: ${error.message}`)
})
shards.on('error', (error) => {
  say(`error: ${error.message}`)
})

const nights = new Worker<{ night: string; count: number }, NightResult>(NIGHT_QUEUE, (job) => finishNight(redis, job), options)
nights.on('completed', (job) => {
  say(`night ${job.data.night} done: ${job.returnvalue.written} messages in ${job.returnvalue.files.length} files`)
})
nights.on('error', (error) => {
  say(`error: ${error.message}`)
})

async function stop(signal: string): Promise<void> {
  say(`${signal}: saving and handing the running shard jobs back to the queue`)
  shards.cancelAllJobs(STOPPING) // each saves where it stands and goes back to the queue
  await Promise.all([shards.close(), nights.close()])
  await client.close()
  redis.disconnect()
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop(signal))
await Promise.all([shards.waitUntilReady(), nights.waitUntilReady()])
say(`ready (Redis ${settings.redisUrl.replace(/\/\/[^@/]*@/, '//')}, prefix ${settings.prefix})`)
