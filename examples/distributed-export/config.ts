// What the producer and the workers share: the queues' names, the job data, the Redis connection
// and the settings, all from the environment (README.md in this folder lists them).
import { Redis } from 'ioredis'
import type { ListNewSummary, MessagesCheckpoint, Shard } from 'chat-service-sdk'

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
  readonly summary: ListNewSummary | null
}

/** What a finished night returns. */
export interface NightResult {
  readonly night: string
  readonly written: number
  readonly files: string[]
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
  /** BullMQ: how long a job's lock lasts without renewal, and how often stalled jobs are looked for (ms). */
  lockDurationMs: number('EXPORT_LOCK_MS', 30_000),
  stalledIntervalMs: number('EXPORT_STALLED_INTERVAL_MS', 30_000),
  /** `off` leaves the 429 pause to each process (to measure what the shared one saves). */
  sharedRateLimit: process.env['EXPORT_RATE_LIMIT_STORE'] !== 'off',
  /** The store's `maxAgeMs`: how old the pause read from Redis may be (ms; default the SDK's 100; 0: read before every request). */
  rateLimitStoreMaxAgeMs: process.env['EXPORT_STORE_MAX_AGE_MS'] === undefined ? undefined : number('EXPORT_STORE_MAX_AGE_MS', 100),
}

/** A Redis connection as BullMQ wants it (no retry limit per command: workers block on Redis). */
export function connect(): Redis {
  return new Redis(settings.redisUrl, { maxRetriesPerRequest: null })
}

/** The Redis key of the last finished night's checkpoints. */
export const checkpointsKey = (): string => `${settings.prefix}:checkpoints`
/** The Redis key of the shared 429 pause: one per API key pair, as the service limits each pair. */
export const rateLimitKey = (): string => `${settings.prefix}:rate-limited-until:${process.env['CHAT_SERVICE_KEY_ID'] ?? 'default'}`
