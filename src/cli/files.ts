/**
 * Durable files for the export: atomic replacement (a crash leaves the old file or the new one,
 * never half of one), flushing lines to disk before the state that counts them, and a lock that
 * keeps two exports from writing the same files (an overlapping cron run).
 *
 * @module
 */
import type { WriteStream } from 'node:fs'
import { open, readFile, rename, rm, stat, utimes, type FileHandle } from 'node:fs/promises'
import { hostname } from 'node:os'
import { dirname } from 'node:path'

/** The error code of a failed file operation (`ENOENT`), if it has one. */
function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code
}

/** The size of the file at `path` in bytes, or `undefined` when there is none. */
export async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return undefined
    throw error
  }
}

/** The text of the file at `path`, or `undefined` when there is none. */
export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return undefined
    throw error
  }
}

/** Makes a rename or a new file in the directory of `path` durable (where a directory can be opened: not on Windows). */
async function syncDirectory(path: string): Promise<void> {
  const directory = await open(dirname(path), 'r').catch(() => undefined)
  await directory?.sync().catch(() => undefined)
  await directory?.close()
}

/**
 * Replaces the file at `path` with `text` in one step: written to `path.tmp`, fsynced, renamed
 * over `path`, and the rename made durable. A crash leaves the old file or the new one.
 */
export async function replaceFile(path: string, text: string): Promise<void> {
  const temporary = `${path}.tmp`
  const file = await open(temporary, 'w')
  try {
    await file.writeFile(text)
    await file.sync()
  } finally {
    await file.close()
  }
  await rename(temporary, path)
  await syncDirectory(path)
}

/** Resolves once every line written to `out` so far is in the file (`handle`) and on disk. */
export async function flushToDisk(out: WriteStream, handle: FileHandle): Promise<void> {
  // Writes complete in order, so an empty write's callback runs after every earlier line is written.
  await new Promise<void>((resolve, reject) => {
    out.write('', (error) => {
      if (error) reject(error)
      else resolve()
    })
  })
  await handle.sync()
}

/** What a lock file holds. */
interface LockOwner {
  readonly pid: number
  readonly host: string
  readonly since: string
}

/** How often a held lock is touched (ms), and after how long without a touch it is taken to be abandoned. */
const LOCK_TOUCH_MS = 10_000
const LOCK_STALE_MS = 60_000

/** A held lock: release it when done. */
export interface Lock {
  release(): Promise<void>
}

/** Whether process `pid` runs on this machine (EPERM: it runs, as another user). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return codeOf(error) === 'EPERM'
  }
}

/**
 * Takes the lock `path` (a file made with O_EXCL), refreshed every 10 s while held. A lock left by
 * a process that is gone (same host, pid not running) or not refreshed for 60 s (another host, say
 * the pod of last night's CronJob, killed) is taken over.
 * @throws Error naming the holder when another export holds it.
 */
export async function takeLock(path: string): Promise<Lock> {
  const me: LockOwner = { pid: process.pid, host: hostname(), since: new Date().toISOString() }
  for (let attempt = 0; ; attempt++) {
    try {
      const file = await open(path, 'wx')
      try {
        await file.writeFile(`${JSON.stringify(me)}\n`)
      } finally {
        await file.close()
      }
      break
    } catch (error) {
      if (codeOf(error) !== 'EEXIST' || attempt > 0) throw error
      const text = await readIfExists(path)
      const modified = await stat(path).then(
        (s) => s.mtimeMs,
        () => 0,
      )
      let owner: Partial<LockOwner> = {}
      try {
        owner = JSON.parse(text ?? '{}') as Partial<LockOwner>
      } catch {
        // A lock half written by a crash: its age decides.
      }
      // Same host: gone unless its process runs, and that process is not this one (a container
      // restarted in its pod runs with the pid the killed one had).
      const abandoned =
        Date.now() - modified > LOCK_STALE_MS ||
        (owner.host === me.host && typeof owner.pid === 'number' && (owner.pid === me.pid || !isRunning(owner.pid)))
      if (!abandoned) {
        throw new Error(
          `another export is running on these files (pid ${String(owner.pid)} on ${String(owner.host)}, since ${String(owner.since)}; ` +
            `lock ${path}); if it is not, delete the lock file`,
          { cause: error },
        )
      }
      await rm(path, { force: true })
    }
  }
  const timer = setInterval(() => {
    const now = new Date()
    void utimes(path, now, now).catch(() => undefined)
  }, LOCK_TOUCH_MS)
  timer.unref()
  return {
    async release() {
      clearInterval(timer)
      await rm(path, { force: true })
    },
  }
}
