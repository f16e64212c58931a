/**
 * Durable files for the export: atomic replacement (a crash leaves the old file or the new one,
 * never half of one), publication of a complete file under a name only if that name is free
 * (the lock's building block), and {@link FileError}, the one way a failed file operation is told:
 * which file, what it is for, what was being done, and the errno (`no space left on device
 * (ENOSPC)`), never a stack.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { link, lstat, open, readdir, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/** The error code of a failed file operation (`ENOENT`), if it has one. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** Codes that mean "no room": the disk, the quota, or the file system's inode table is full. */
const NO_ROOM = new Set(['ENOSPC', 'EDQUOT', 'EFBIG'])

/**
 * A file operation that failed, said for the person running the command: `cannot write
 * /data/x.jsonl (the output): no space left on device (ENOSPC)`. Exit status 1.
 */
export class FileError extends Error {
  override readonly name = 'FileError'
  /** The file the operation was on. */
  readonly path: string
  /** The errno code (`ENOSPC`), when the system gave one. */
  readonly code: string | undefined

  /**
   * @param action - What was being done, as a verb phrase: `write`, `create`, `read`.
   * @param path - The file.
   * @param role - What the file is to the command (`the output`, `the cursor file of /data/x.jsonl`).
   */
  constructor(action: string, path: string, role: string, cause: unknown) {
    super(`cannot ${action} ${path} (${role}): ${describeSystemError(cause)}`, { cause })
    this.path = path
    this.code = codeOf(cause)
  }

  /** Whether the disk (or the quota, or the inode table) is full: room made, the same command goes on. */
  get noRoom(): boolean {
    return this.code !== undefined && NO_ROOM.has(this.code)
  }
}

/**
 * `no space left on device (ENOSPC)` from a Node.js system error (whose own message is
 * `ENOSPC: no space left on device, write`); the plain message for anything else.
 */
export function describeSystemError(error: unknown): string {
  const code = codeOf(error)
  const message = error instanceof Error ? error.message : String(error)
  if (code === undefined) return message
  const described = new RegExp(`^${code}: ([^,]+)`).exec(message)?.[1]
  return described === undefined ? `${message} (${code})` : `${described} (${code})`
}

/** Runs `operation`; a system error (one with an errno code) becomes a {@link FileError} for `path`, anything else passes. */
export async function onFile<T>(action: string, path: string, role: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation()
  } catch (error) {
    if (error instanceof FileError || codeOf(error) === undefined) throw error
    throw new FileError(action, path, role, error)
  }
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

/** Makes a rename or a new name in the directory of `path` durable (where a directory can be opened: not on Windows). */
async function syncDirectory(path: string): Promise<void> {
  const directory = await open(dirname(path), 'r').catch(() => undefined)
  await directory?.sync().catch(() => undefined)
  await directory?.close()
}

/** A name beside `path` that no other process uses: `path.<random>.<suffix>`. */
export function uniqueSibling(path: string, suffix: string): string {
  return `${path}.${randomBytes(6).toString('hex')}.${suffix}`
}

/**
 * How old a temporary file of {@link replaceFile} must be before {@link removeLeftovers} takes it
 * for one whose process died, ms. Only the lock's holder removes them, so a live writer on this
 * host is never in the way (it holds the lock, however long it is stopped); one on another host
 * loses the lock when stopped past a minute (lock.ts), and the age keeps its file of the moment.
 */
export const LEFTOVER_AGE_MS = 10 * 60_000

/**
 * Removes the temporary files that {@link replaceFile} left beside `path` when its process was
 * killed between writing one and renaming it (`path.<12 hex digits>.tmp`, a regular file last
 * written over {@link LEFTOVER_AGE_MS} ago): a nightly job killed now and then (an OOM kill, a
 * deploy) would otherwise leave one more copy of its state file each time, until the disk is full.
 * Only for the holder of the lock that guards `path`, the one writer of those names. Best effort:
 * a name it cannot read or remove stays. Returns the paths removed.
 */
export async function removeLeftovers(path: string): Promise<string[]> {
  const prefix = `${basename(path)}.`
  const names = await readdir(dirname(path)).catch(() => [] as string[])
  const removed: string[] = []
  for (const name of names) {
    if (!name.startsWith(prefix) || !/^[0-9a-f]{12}\.tmp$/.test(name.slice(prefix.length))) continue
    const leftover = join(dirname(path), name)
    const info = await lstat(leftover).catch(() => undefined)
    if (info === undefined || !info.isFile() || Date.now() - info.mtimeMs < LEFTOVER_AGE_MS) continue
    try {
      await rm(leftover)
      removed.push(leftover)
    } catch {
      // It stays: best effort.
    }
  }
  return removed
}

/** Whether `a` and `b` name one existing file (the same device and inode: links, `..`, bind mounts), `false` when either is missing. */
export async function sameFile(a: string, b: string): Promise<boolean> {
  const [first, second] = await Promise.all([stat(a).catch(() => undefined), stat(b).catch(() => undefined)])
  return first !== undefined && second !== undefined && first.dev === second.dev && first.ino === second.ino
}

/** Writes `text` to a new file at `path` (which must not exist) and fsyncs it; removes it when that fails. Returns it open. */
async function writeNew(path: string, text: string): Promise<FileHandle> {
  const file = await open(path, 'wx')
  try {
    await file.writeFile(text)
    await file.sync()
    return file
  } catch (error) {
    await file.close().catch(() => undefined)
    await rm(path, { force: true }).catch(() => undefined)
    throw error
  }
}

/**
 * Replaces the file at `path` with `text` in one step: written to a temporary file of its own
 * beside it, fsynced, renamed over `path`, and the rename made durable. A crash or a full disk
 * leaves the old file or the new one, never a part of one; a failed write removes the temporary
 * file. Errors are {@link FileError}s naming `path` and `role`.
 */
export async function replaceFile(path: string, text: string, role: string): Promise<void> {
  const temporary = uniqueSibling(path, 'tmp')
  await onFile('write', path, role, async () => {
    const file = await writeNew(temporary, text)
    await file.close()
    try {
      await rename(temporary, path)
    } catch (error) {
      await rm(temporary, { force: true }).catch(() => undefined)
      throw error
    }
    await syncDirectory(path)
  })
}

/** A complete file, written beside where it is to be published, kept open (its times can be refreshed through it). */
export interface Staged {
  readonly path: string
  readonly handle: FileHandle
  /** Removes the staged name (the published ones stay); the file stays open. */
  forget(): Promise<void>
  /** Removes the staged name and closes the file. */
  discard(): Promise<void>
}

/** Writes `text` to a new temporary file beside `target`, fsynced: ready to be published with {@link publish}. */
export async function stage(target: string, text: string): Promise<Staged> {
  const path = uniqueSibling(target, 'new')
  const handle = await writeNew(path, text)
  return {
    path,
    handle,
    async forget() {
      await rm(path, { force: true }).catch(() => undefined)
    },
    async discard() {
      await rm(path, { force: true }).catch(() => undefined)
      await handle.close().catch(() => undefined)
    },
  }
}

/**
 * Publishes the staged file under `target` if no file has that name (a hard link: atomic, and
 * the file is complete the moment it is seen). Returns `false` when `target` exists.
 */
export async function publish(staged: Staged, target: string): Promise<boolean> {
  try {
    await link(staged.path, target)
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return false
    throw error
  }
  await syncDirectory(target)
  return true
}

/** Publishes the staged file under `target`, replacing whatever is there (a rename of a second name of it: atomic). */
export async function publishOver(staged: Staged, target: string): Promise<void> {
  const second = uniqueSibling(target, 'new')
  await link(staged.path, second)
  try {
    await rename(second, target)
  } catch (error) {
    await rm(second, { force: true }).catch(() => undefined)
    throw error
  }
  await syncDirectory(target)
}
