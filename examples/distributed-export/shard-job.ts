// One shard job: the messages of one shard added since the last night (`listNew` with `shard`),
// appended to the shard's own JSON Lines file. The job's data holds where it stands, saved only
// after the lines it counts are on disk, so that a retried or stalled job (another attempt, maybe
// on another worker) cuts the file back to the saved length and goes on from there: no message
// lost, none written twice.
import { once } from 'node:events'
import type { WriteStream } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { DelayedError, UnrecoverableError, type Job } from 'bullmq'
import type { ChatServiceClient } from 'chat-service-sdk'
import type { Redis } from 'ioredis'
import { settings, type SavedPosition, type ShardJobData, type ShardResult } from './config.ts'

/** Why a worker aborts a running job: it stops (its attempt goes back to the queue), or it lost the job's lock. */
export const STOPPING = 'the worker is stopping'
export const LOCK_LOST = 'the job lock was lost'

/**
 * The job is no longer this attempt's: its lock expired and another worker may have it, or Redis
 * lost it (restarted without persistence). The attempt writes nothing more and saves nothing.
 */
export class LockLostError extends Error {
  override readonly name = 'LockLostError'
}

/**
 * Most bytes of lines an attempt holds before it saves, whatever `EXPORT_SAVE_EVERY_MS` says: lines go
 * into the file only at a save (after the lock check), so this bounds the memory they take.
 */
const MAX_PENDING_BYTES = 8 * 1024 * 1024

/**
 * Sets a job's data only while `ARGV[1]` holds its lock, in one step: BullMQ's `updateData` checks
 * no lock, so a save sent just before Redis went away (its lock check passed) would land once Redis
 * is back, after the lock expired and another worker may have taken the job (or after Redis lost
 * the job and the night added it again), and move that attempt's position to lines it cut back.
 * KEYS: the job's lock, the job's hash (BullMQ's keys: `<prefix>:<queue>:<id>`, `...:lock`).
 * ARGV: the token, the data (JSON, as BullMQ stores it). Answers 1 when set, 0 when not.
 */
const SAVE_WHILE_LOCKED = `
if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('HSET', KEYS[2], 'data', ARGV[2])
  return 1
end
return 0`

/** Resolves once every line written to `stream` so far is in the file and on disk. */
async function flushToDisk(stream: WriteStream, file: FileHandle): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    // An empty write's callback runs after every earlier write has reached the file.
    stream.write('', (error) => {
      if (error) reject(error)
      else resolve()
    })
  })
  await file.sync()
}

/** Opens the shard's file cut back to `bytes`: the lines an attempt wrote after its last save come again. */
async function openAt(job: Job<ShardJobData>, bytes: number, log: (line: string) => void): Promise<FileHandle> {
  const file = await open(job.data.out, 'a') // created if missing; every write goes to the end
  const { size } = await file.stat()
  if (size < bytes) {
    await file.close()
    // Lines the job counts as written are gone: retrying cannot help.
    throw new UnrecoverableError(`${job.data.out} holds ${size} bytes, but job ${job.id ?? '?'} saved ${bytes}: the file was lost or cut`)
  }
  if (size > bytes) {
    log(`cutting ${job.data.out} back from ${size} to ${bytes} bytes (lines written after the last save)`)
    await file.truncate(bytes)
  }
  return file
}

/**
 * Runs one attempt of a shard job: cuts the file back to the saved length, then writes the shard's
 * new messages from the saved checkpoint, saving its position about every `EXPORT_SAVE_EVERY_MS`.
 * `redis` is the worker's connection (the saves' lock check goes through it), `token` the job's lock
 * token from BullMQ. Throws `LockLostError` once the job is no longer this attempt's.
 */
export async function exportShard(
  client: ChatServiceClient,
  redis: Redis,
  job: Job<ShardJobData, ShardResult>,
  token: string | undefined,
  signal: AbortSignal | undefined,
  log: (line: string) => void,
): Promise<ShardResult> {
  const { shard, since, saved } = job.data
  const file = await openAt(job, saved?.bytes ?? 0, log)
  const stream = file.createWriteStream() // closes the file when it ends
  log(saved === null ? 'started' : `resuming after ${saved.written} messages (attempt ${job.attemptsStarted})`)
  const changes = client.conversations.messages.listNew(
    { checkpoint: saved?.checkpoint ?? since ?? undefined, shard, concurrency: settings.concurrency },
    signal === undefined ? {} : { signal },
  )
  let bytes = saved?.bytes ?? 0
  let written = saved?.written ?? 0
  // Lines taken from `changes` but not in the file yet: they go in only once the lock check passed
  // (`commit`), so that an attempt that lost its job writes nothing into the file the attempt that
  // has it now cut back and writes (README.md, "Why each step is in its order").
  let pending: string[] = []
  let pendingBytes = 0
  const lockLost = (): LockLostError =>
    new LockLostError(
      `job ${job.id ?? '?'} is no longer this worker's (its lock is gone: it stalled and another worker took it, or Redis lost it); ` +
        `stopped, ${job.data.out} left as it is`,
    )
  const commit = async (): Promise<void> => {
    // Only while the job is still ours. Renewing the lock is the check (0 when the lock is gone: it
    // expired and another worker may have taken the job, or Redis lost it), and it also gives this
    // attempt `lockDuration` in which no other can take the job: the lines go in within it.
    if (token !== undefined && (await job.extendLock(token, settings.lockDurationMs)) !== 1) {
      pending = []
      throw lockLost()
    }
    const lines = pending.join('')
    pending = []
    pendingBytes = 0
    if (lines !== '') stream.write(lines) // flushToDisk waits for it
    await flushToDisk(stream, file)
  }
  const save = async (): Promise<void> => {
    // Taken right after the last line (pending ones included); in the job only once that line is on disk.
    const at: SavedPosition = { checkpoint: changes.checkpoint(), bytes, written }
    await commit()
    const data: ShardJobData = { ...job.data, saved: at }
    if (token === undefined) await job.updateData(data)
    else {
      // The lock is checked again with the data set, in one step: Redis may have gone away since `commit`.
      const key = `${job.queueQualifiedName}:${job.id ?? ''}`
      if ((await redis.eval(SAVE_WHILE_LOCKED, 2, `${key}:lock`, key, token, JSON.stringify(data))) !== 1) throw lockLost()
      job.data = data
    }
    log(`saved: ${written} messages, ${bytes} bytes`)
  }
  let lastSave = performance.now()
  try {
    for await (const message of changes) {
      const line = `${JSON.stringify(message)}\n`
      const size = Buffer.byteLength(line)
      bytes += size
      written++
      pending.push(line)
      pendingBytes += size
      if (performance.now() - lastSave >= settings.saveEveryMs || pendingBytes >= MAX_PENDING_BYTES) {
        await save()
        lastSave = performance.now()
      }
    }
    await commit() // the job completes (with its checkpoint) only once every line is on disk
  } catch (error) {
    // Another worker has the job now (or nobody: Redis lost it): write nothing more, save nothing.
    if (signal?.reason === LOCK_LOST || error instanceof LockLostError) {
      log(error instanceof LockLostError ? error.message : `stopped: the job's lock could not be renewed; ${job.data.out} left as it is`)
      throw error
    }
    // What was written stays written: the next attempt goes on from here (or from the last save, if this one fails).
    await save().catch((failure: unknown) => {
      log(`could not save: ${describeRedisError(failure)}`)
    })
    if (signal?.reason === STOPPING && token !== undefined) {
      // Back to the queue at once, without using up an attempt: another worker takes it.
      await job.moveToDelayed(Date.now(), token)
      throw new DelayedError()
    }
    throw error
  } finally {
    stream.end()
    await once(stream, 'close')
  }
  log(`done: ${written} messages`)
  return { shard, out: job.data.out, written, bytes, checkpoint: changes.checkpoint(), summary: changes.summary ?? null }
}

/**
 * An error of BullMQ as a line for the log: "Missing key for job X" (the job is gone from Redis:
 * restarted without persistence, flushed, or evicted) said in words.
 */
export function describeRedisError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  const missing = /Missing key for (?:parent )?job (\S+?)\.?(?:\s|$)/.exec(text)
  if (missing === null) return text
  return `${text}: job ${missing[1] ?? '?'} is gone from Redis (restarted without persistence, flushed, or its keys evicted); the producer says what was lost and how to resume`
}
