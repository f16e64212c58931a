// What the producer and the workers share: the queues' names, the job data, the Redis connection
// and the settings, all from the environment (README.md in this folder lists them).
import { Redis } from 'ioredis'
import type { MessagesCheckpoint, Shard, resources } from 'chat-service-sdk'

/** The queue of shard jobs (the flow's children) and the queue of nights (their parent). */
export const SHARD_QUEUE = 'export-shard'
export const NIGHT_QUEUE = 'export-night'

/** Where the last finished night left each shard: read by the next night's producer. */
export interface NightCheckpoints {
  readonly night: string
  readonly count: number
  /** One per shard, by index. */
  readonly checkpoints: MessagesCheckpoint[]
}

/** How far an attempt got: saved in the job only once the lines it counts are on disk. */
export interface SavedPosition {
  readonly checkpoint: MessagesCheckpoint
  /** Bytes of the shard's file up to the last line the checkpoint counts. */
  readonly bytes: number
  /** Messages written to the file by this night's attempts. */
  readonly written: number
}

/** A shard job's data. */
export interface ShardJobData {
  readonly night: string
  readonly shard: Shard
  /** The absolute path of this shard's JSON Lines file for this night. */
  readonly out: string
  /** Where the night starts: the last night's checkpoint of this shard (or all of them, if the shard count changed); none on a first night. */
  readonly since: MessagesCheckpoint | MessagesCheckpoint[] | null
  /** Where an earlier attempt of this job stopped, if one did (`job.updateData`). */
  readonly saved: SavedPosition | null
}

/** What a finished shard job returns (BullMQ keeps it as the job's return value). */
export interface ShardResult {
  readonly shard: Shard
  readonly out: string
  readonly written: number
  readonly bytes: number
  readonly checkpoint: MessagesCheckpoint
  readonly summary: resources.ListNewSummary | null
}

/** What a finished night returns. */
export interface NightResult {
  readonly night: string
  readonly written: number
  readonly files: string[]
}

/** `name`'s value, one of `values` (the first when unset). */
function oneOf<const T extends readonly [string, ...string[]]>(name: string, values: T): T[number] {
  const text = process.env[name]
  if (text === undefined || text === '') return values[0]
  if (!values.includes(text)) throw new Error(`${name} must be one of ${values.join(', ')}, received ${text}`)
  return text
}

const number = (name: string, fallback: number): number => {
  const text = process.env[name]
  if (text === undefined || text === '') return fallback
  const value = Number(text)
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a whole number, received ${text}`)
  return value
}

/** Settings from the environment. */
export const settings = {
  /** The Redis of BullMQ and of the shared 429 pause. */
  redisUrl: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
  /** BullMQ's key prefix, also the prefix of this example's own keys. */
  prefix: process.env['EXPORT_PREFIX'] ?? 'chat-export',
  /** Requests in flight per shard job (`listNew`'s concurrency). */
  concurrency: number('EXPORT_CONCURRENCY', 4),
  /** Shard jobs a worker process runs at once. */
  jobsPerWorker: number('EXPORT_JOBS_PER_WORKER', 1),
  /** How often a running shard job saves its position (ms). */
  saveEveryMs: number('EXPORT_SAVE_EVERY_MS', 1_000),
  /**
   * BullMQ's `lockDuration` (ms): how long a shard job's lock lasts without renewal (a running
   * worker renews it about every quarter of it). 15 s: a healthy worker never goes that long
   * without a renewal (its event loop blocks for milliseconds: a page's JSON, an fsync), so it keeps
   * its job through GC pauses and short Redis blips, and a dead worker's job is free 15 s later at
   * most, not BullMQ's 30 s. README.md, "Settings", has the whole reasoning.
   */
  lockDurationMs: number('EXPORT_LOCK_MS', 15_000),
  /** BullMQ's `stalledInterval` (ms): how often the workers look for jobs whose lock expired. */
  stalledIntervalMs: number('EXPORT_STALLED_INTERVAL_MS', 5_000),
  /**
   * BullMQ's `maxStalledCount`: stalls a shard job survives (each resumes from its saved position);
   * the next one fails it, and the night with it. 2: a worker may die for reasons of its own (a
   * node drained, an out-of-memory kill of a neighbour), but a shard that takes down three
   * workers is likely what kills them.
   */
  maxStalledCount: number('EXPORT_MAX_STALLED_COUNT', 2),
  /** How often the producer checks on its night (ms): Redis restarted or lost the night's jobs, shards done. */
  watchEveryMs: number('EXPORT_WATCH_EVERY_MS', 5_000),
  /** How long the producer waits for an unreachable Redis before it gives up, saying so (ms). */
  redisDownMs: number('EXPORT_REDIS_DOWN_MS', 60_000),
  /**
   * What the workers share through Redis: `on` (default) the 429 pause, the learned rate and its
   * budget; `pause` the 429 pause only (0.3's store, without `take`: each worker paces on its own);
   * `off` nothing (to measure what sharing saves).
   */
  sharedRateLimit: oneOf('EXPORT_RATE_LIMIT_STORE', ['on', 'pause', 'off'] as const),
  /** The SDK's `pacing` option: `adaptive` (default) or `off` (0.3's behaviour, to measure what pacing saves). */
  pacing: oneOf('EXPORT_PACING', ['adaptive', 'off'] as const),
  /** The store's `maxAgeMs`: how old the pause read from Redis may be (ms; default the SDK's 100; 0: read before every request). */
  rateLimitStoreMaxAgeMs: process.env['EXPORT_STORE_MAX_AGE_MS'] === undefined ? undefined : number('EXPORT_STORE_MAX_AGE_MS', 100),
}

/** A Redis connection as BullMQ wants it (no retry limit per command: workers block on Redis). */
export function connect(): Redis {
  return new Redis(settings.redisUrl, { maxRetriesPerRequest: null })
}

/** The job id of a night (the flow's parent) and of one of its shard jobs. */
export const nightJobId = (night: string): string => `night-${night}`
export const shardJobId = (night: string, shard: Shard): string => `${nightJobId(night)}-shard-${shard.index}-of-${shard.count}`

/** The Redis key of the last finished night's checkpoints. */
export const checkpointsKey = (): string => `${settings.prefix}:checkpoints`
/** The Redis key of the shared 429 pause: one per API key pair, as the service limits each pair. */
export const rateLimitKey = (): string => `${settings.prefix}:rate-limited-until:${process.env['CHAT_SERVICE_KEY_ID'] ?? 'default'}`
