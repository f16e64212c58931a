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

export async function exportShard(
  client: ChatServiceClient,
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
  const save = async (): Promise<void> => {
    // Taken right after the last line written; in the job only once that line is on disk.
    const at: SavedPosition = { checkpoint: changes.checkpoint(), bytes, written }
    await flushToDisk(stream, file)
    // Only while the job is still ours: `updateData` does not check the lock, and a stale save would
    // move the position of the worker that has the job now (or of a job of the same id added again
    // after Redis lost this one). Renewing the lock is the check: 0 when the lock is gone.
    if (token !== undefined && (await job.extendLock(token, settings.lockDurationMs)) !== 1) {
      throw new LockLostError(
        `job ${job.id ?? '?'} is no longer this worker's (its lock is gone: it stalled and another worker took it, or Redis lost it); ` +
          `stopped, ${job.data.out} left as it is`,
      )
    }
    await job.updateData({ ...job.data, saved: at })
    log(`saved: ${written} messages, ${bytes} bytes`)
  }
  let lastSave = performance.now()
  try {
    for await (const message of changes) {
      const line = `${JSON.stringify(message)}\n`
      bytes += Buffer.byteLength(line)
      written++
      if (!stream.write(line)) await once(stream, 'drain')
      if (performance.now() - lastSave >= settings.saveEveryMs) {
        await save()
        lastSave = performance.now()
      }
    }
    await flushToDisk(stream, file) // the job completes (with its checkpoint) only once every line is on disk
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
