// What the producer reads of the Redis itself: which server it is (a restart gives a new `run_id`),
// and whether it keeps the night's jobs through a restart (AOF, RDB) and under memory pressure
// (`maxmemory-policy`). README.md, "Redis persistence", says why each matters.
import type { Redis } from 'ioredis'

/** The fields of `INFO` the producer uses. */
export interface RedisIdentity {
  /** Changes at every start of the server: a different one means Redis restarted. */
  readonly runId: string
  /** Whether it writes an append-only file (AOF). */
  readonly aof: boolean
  /** Whether it takes RDB snapshots (`save` points); `undefined` when `CONFIG` is not allowed (managed Redis). */
  readonly rdb: boolean | undefined
  /** `maxmemory-policy`: anything but `noeviction` may evict a job's keys. */
  readonly evictionPolicy: string
}

/** `INFO` text as `field → value`. */
function fields(text: string): Map<string, string> {
  const found = new Map<string, string>()
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':')
    if (colon > 0 && !line.startsWith('#')) found.set(line.slice(0, colon), line.slice(colon + 1).trim())
  }
  return found
}

/** Reads the server's `run_id`, persistence and eviction policy. */
export async function redisIdentity(redis: Redis): Promise<RedisIdentity> {
  const info = fields(await redis.info())
  let rdb: boolean | undefined
  try {
    const [, save] = (await redis.config('GET', 'save')) as [string, string]
    rdb = save.trim() !== ''
  } catch {
    rdb = undefined // CONFIG renamed or refused, as managed services do
  }
  return {
    runId: info.get('run_id') ?? '',
    aof: info.get('aof_enabled') === '1',
    rdb,
    evictionPolicy: info.get('maxmemory_policy') ?? 'noeviction',
  }
}

/** The server's `run_id` alone (cheap: one section of `INFO`). */
export async function redisRunId(redis: Redis): Promise<string> {
  return fields(await redis.info('server')).get('run_id') ?? ''
}

/** What the operator should know before a night about where its state lives; `[]` when nothing. */
export function persistenceWarnings(identity: RedisIdentity, url: string): string[] {
  const warnings: string[] = []
  if (!identity.aof && identity.rdb !== true) {
    warnings.push(
      `warning: Redis at ${url} keeps no copy of its data on disk (no AOF${identity.rdb === undefined ? '; RDB unknown' : ', no RDB'}): ` +
        'if it restarts during a night, the night is lost (the producer says so and how to resume), and with it the checkpoints between nights. ' +
        'Turn on AOF (README.md, "Redis persistence").',
    )
  } else if (!identity.aof) {
    warnings.push(
      `warning: Redis at ${url} takes RDB snapshots but keeps no AOF: a restart takes it back to its last snapshot (shards redo what they ` +
        'saved since; a night finished since runs again). AOF loses at most a second (README.md, "Redis persistence").',
    )
  }
  if (identity.evictionPolicy !== 'noeviction') {
    warnings.push(
      `warning: Redis at ${url} has maxmemory-policy ${identity.evictionPolicy}: under memory pressure it may evict a job's keys, ` +
        'which BullMQ cannot survive. Set it to noeviction.',
    )
  }
  return warnings
}

/** Redis URL without its password, for messages. */
export function safeUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//')
}
