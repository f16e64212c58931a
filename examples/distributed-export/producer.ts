// Starts a night: one BullMQ flow, a parent job for the night and one child job per shard, then
// waits until the night is done (every shard, then the parent) and prints what it wrote.
//   producer.ts --out DIR [--shards 4] [--night NAME]    (NAME: today's date by default)
// Running it again for the same night adds nothing (the job ids are the night's), and waits again.
import { resolve } from 'node:path'
import { mkdirSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { FlowProducer, Queue, QueueEvents } from 'bullmq'
import { MAX_SHARDS } from 'chat-service-sdk'
import {
  checkpointsKey,
  connect,
  NIGHT_QUEUE,
  settings,
  SHARD_QUEUE,
  type NightCheckpoints,
  type NightResult,
  type ShardJobData,
} from './config.ts'

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

const redis = connect()
const connection = { connection: redis, prefix: settings.prefix }
const nights = new Queue<{ night: string; count: number }>(NIGHT_QUEUE, connection)
const listening = redis.duplicate() // QueueEvents blocks on its connection: one of its own
const events = new QueueEvents(NIGHT_QUEUE, { connection: listening, prefix: settings.prefix })
const flows = new FlowProducer(connection)
try {
  const parentId = `night-${night}`
  const running = (await nights.getJobs(['waiting-children', 'wait', 'active', 'delayed'])).filter((job) => job.id !== parentId)
  if (running.length > 0) {
    // Its checkpoints are not saved yet: this night would read everything since the one before.
    throw new Error(`night ${running.map((job) => job.data.night).join(', ')} is not finished yet; run this one after it`)
  }
  // The last finished night's checkpoints: each shard starts from its own, or, when the shard
  // count changed, from all of them (listNew merges them and keeps its shard's conversations).
  const text = await redis.get(checkpointsKey())
  const last = text === null ? null : (JSON.parse(text) as NightCheckpoints)
  const since = (index: number): ShardJobData['since'] =>
    last === null ? null : last.count === count ? (last.checkpoints[index] ?? null) : last.checkpoints
  process.stdout.write(
    last === null ? `night ${night}: a first night, every message\n` : `night ${night}: the messages added since night ${last.night}\n`,
  )

  await events.waitUntilReady()
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
        jobId: `${parentId}-shard-${index}-of-${count}`,
        attempts: 5, // failures (a 5xx after the SDK's own retries, a lost connection) resume from the saved position
        backoff: { type: 'exponential', delay: 1_000 },
        failParentOnFailure: true, // a shard that fails for good fails the night, rather than leave it waiting
      },
    })),
  })
  const result = (await flow.job.waitUntilFinished(events)) as NightResult
  process.stdout.write(`night ${night} done: ${result.written} messages in ${result.files.join(', ')}\n`)
} finally {
  await Promise.all([events.close(), nights.close(), flows.close()])
  // BullMQ leaves connections it was given open.
  listening.disconnect()
  redis.disconnect()
}
