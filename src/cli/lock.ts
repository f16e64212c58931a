/**
 * The export's lock: at most one export writes a set of files (an output and its state), whatever
 * the timing of kills, pauses (Ctrl-Z, SIGSTOP) and races of any number of exports.
 *
 * - **Made whole, atomically.** The lock's record (token, pid, host, ...) is written and fsynced
 *   in a file of its own, then published under the lock's name with `link()`, which fails when
 *   the name is taken: a lock is never seen empty or half written, and of two exports at once,
 *   one gets it.
 * - **Liveness.** Where pids can be compared (the same boot of the same machine and the same pid
 *   namespace, `space` below; on Linux from /proc, elsewhere the host name), a lock is taken over
 *   only once its process is gone (a pid reused since is told apart by its start time). A paused
 *   holder (stopped by Ctrl-Z or SIGSTOP) keeps its lock however long it sleeps. From another
 *   space (another machine, another container on a shared volume) the pid says nothing: the
 *   holder refreshes the lock's time every 10 s, and a lock not refreshed for 60 s is taken over.
 * - **Takeover, exactly once.** Replacing (or, for its holder, removing) a lock instance first
 *   takes that instance's claim, `LOCK.takeover-<identity>`, itself a lock of this kind (so a
 *   claim left by a process that died is judged, and taken over, the same way). With the claim
 *   held, the taker checks that the same instance is still there and only then renames its own
 *   record over it. A taker that judged an instance abandoned late (paused between looking and
 *   acting) finds either the claim taken or another instance, and backs off: it never removes a
 *   lock it did not judge.
 * - **Fencing.** The holder checks that the lock still holds its token before each write of lines
 *   and each save of state ({@link HeldLock.check}). A holder that lost its lock (paused for over
 *   60 s while another host took over, or its lock deleted by hand) stops instead of writing.
 *
 * What this cannot give across hosts: file systems offer no "write only while I hold the lock",
 * so a holder paused for over 60 s exactly between its check (a read of the lock file) and its
 * write still makes that one write. On one host (one space), a live holder is never taken over, so
 * nothing can interleave. The README says the same ("One export at a time").
 *
 * @module
 */
import { readFileSync, readlinkSync } from 'node:fs'
import { link, open, readdir, rm } from 'node:fs/promises'
import { hostname } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { stopPoint } from './debug.ts'
import { codeOf, onFile, publish, publishOver, stage, type Staged } from './files.ts'

/** How often a held lock's time is refreshed (ms), and after how long without a refresh another space takes it over. */
export const LOCK_REFRESH_MS = 10_000
export const LOCK_STALE_MS = 60_000
/** Claims of claims taken over before giving up (each level means another process died in the microseconds of a takeover). */
const MAX_CLAIM_DEPTH = 3
/** Tries of publish, look, take over before giving up on a lock that keeps changing. */
const MAX_TRIES = 20

/** What a lock file holds. */
interface LockRecord {
  readonly lock: 'chat-service export'
  readonly version: 1
  /** Unique to this holding of this lock. */
  readonly token: string
  readonly pid: number
  /** The host name, for people. */
  readonly host: string
  /** Where `pid` means something: `linux:<boot id>:<pid namespace>`, or `host:<host name>`. */
  readonly space: string
  /** The process's start time (clock ticks after boot, /proc/PID/stat), which tells a reused pid apart. */
  readonly started: number | null
  readonly since: string
  /** The files it guards, for people. */
  readonly files: string
}

/** A lock of chat-service 0.3 and older: `{ pid, host, since }`. */
interface LegacyRecord {
  readonly pid: number
  readonly host: string
  readonly since?: string
}

/** What is at a lock's name when looked at. */
type Seen =
  | { readonly kind: 'none' }
  | { readonly kind: 'record'; readonly record: LockRecord; readonly identity: string; readonly mtimeMs: number }
  | { readonly kind: 'legacy'; readonly record: LegacyRecord; readonly identity: string; readonly mtimeMs: number }
  | { readonly kind: 'unreadable'; readonly identity: string; readonly mtimeMs: number; readonly size: number; readonly foreign: boolean }

/** Another export holds the lock (or is taking it over): exit status 1, nothing changed. */
export class LockHeldError extends Error {
  override readonly name = 'LockHeldError'
}

/** This export no longer holds its lock: it stops without writing more. Exit status 1. */
export class LockLostError extends Error {
  override readonly name = 'LockLostError'
}

/** A lock this export holds. */
export interface HeldLock {
  /** Resolves when the lock still holds this export's token; rejects with {@link LockLostError} otherwise. */
  check(): Promise<void>
  /** Stops refreshing and removes the lock, if it is still this export's. */
  release(): Promise<void>
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

/** The fields of /proc/PID/stat after the command name (which may hold spaces): [state, ppid, ...]. */
function procStat(pid: number | 'self'): string[] | undefined {
  const text = readProc(`/proc/${pid}/stat`)
  return text === undefined ? undefined : text.slice(text.lastIndexOf(')') + 2).split(' ')
}

/** Where pids of this process's world can be compared: one boot of one machine, one pid namespace. */
function pidSpace(): string {
  const boot = readProc('/proc/sys/kernel/random/boot_id')?.trim()
  let namespace: string | undefined
  try {
    namespace = readlinkSync('/proc/self/ns/pid')
  } catch {
    namespace = undefined
  }
  return boot !== undefined && boot !== '' && namespace !== undefined ? `linux:${boot}:${namespace}` : `host:${hostname()}`
}

/** Field 22 of /proc/PID/stat (index 19 after the name): start time in clock ticks after boot. */
const STARTED_FIELD = 19

function ownRecord(files: string): LockRecord {
  const started = Number(procStat('self')?.[STARTED_FIELD])
  return {
    lock: 'chat-service export',
    version: 1,
    token: randomBytes(12).toString('hex'),
    pid: process.pid,
    host: hostname(),
    space: pidSpace(),
    started: Number.isSafeInteger(started) ? started : null,
    since: new Date().toISOString(),
    files,
  }
}

/** Whether process `pid` of this space runs, is stopped (Ctrl-Z, SIGSTOP), or is gone (a zombie, or another process with its pid). */
function processState(pid: number, started: number | null): 'running' | 'stopped' | 'gone' {
  const stat = procStat(pid)
  if (stat === undefined) {
    if (procStat('self') !== undefined) return 'gone' // /proc works, and has no such process
    try {
      process.kill(pid, 0)
      return 'running'
    } catch (error) {
      return codeOf(error) === 'EPERM' ? 'running' : 'gone'
    }
  }
  const state = stat[0]
  if (state === 'Z' || state === 'X' || state === 'x') return 'gone'
  if (started !== null && Number(stat[STARTED_FIELD]) !== started) return 'gone'
  return state === 'T' || state === 't' ? 'stopped' : 'running'
}

const TOKEN = /^[0-9a-f]{16,64}$/

function isRecord(value: unknown): value is LockRecord {
  const record = value as Partial<LockRecord> | null
  return (
    record !== null &&
    typeof record === 'object' &&
    record.lock === 'chat-service export' &&
    record.version === 1 &&
    typeof record.token === 'string' &&
    TOKEN.test(record.token) &&
    typeof record.pid === 'number' &&
    typeof record.host === 'string' &&
    typeof record.space === 'string' &&
    (record.started === null || typeof record.started === 'number')
  )
}

function isLegacy(value: unknown): value is LegacyRecord {
  const record = value as Partial<LegacyRecord> | null
  return record !== null && typeof record === 'object' && typeof record.pid === 'number' && typeof record.host === 'string'
}

/** What is at `path` now: one open file, so that its times and its text belong together. */
async function inspect(path: string): Promise<Seen> {
  let file
  try {
    file = await open(path, 'r')
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return { kind: 'none' }
    throw error
  }
  try {
    const stats = await file.stat({ bigint: true })
    const text = await file.readFile('utf8')
    const mtimeMs = Number(stats.mtimeMs)
    // A file's identity when it has no token: the same inode, unchanged since.
    const fileIdentity = `i${stats.ino}-${stats.mtimeNs}`
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return { kind: 'unreadable', identity: fileIdentity, mtimeMs, size: text.length, foreign: false }
    }
    if (isRecord(value)) return { kind: 'record', record: value, identity: value.token, mtimeMs }
    const other = value as { lock?: unknown } | null
    if (other !== null && typeof other === 'object' && other.lock === 'chat-service export') {
      // A lock of a later version: its rules are not ours to guess.
      return { kind: 'unreadable', identity: fileIdentity, mtimeMs, size: text.length, foreign: true }
    }
    if (isLegacy(value)) return { kind: 'legacy', record: value, identity: fileIdentity, mtimeMs }
    return { kind: 'unreadable', identity: fileIdentity, mtimeMs, size: text.length, foreign: false }
  } finally {
    await file.close()
  }
}

/** Whether `now` is the instance `then` (same identity, not refreshed since). */
function sameInstance(now: Seen, then: Seen): boolean {
  return now.kind !== 'none' && then.kind !== 'none' && now.identity === then.identity && now.mtimeMs === then.mtimeMs
}

/** Whole seconds from `ms` milliseconds, for messages. */
const seconds = (ms: number): string => `${Math.max(0, Math.round(ms / 1000))} s`

/** Whether to take over what was seen at a lock's name, with what to tell the user, or why not. */
type Verdict = { readonly take: true; readonly note: string } | { readonly take: false; readonly message: string }

/**
 * Judges `seen` (a lock, or a claim on one) for `me`. `subject` starts the refusal
 * (`another export is running on these files`).
 */
function judge(path: string, seen: Exclude<Seen, { kind: 'none' }>, me: LockRecord, subject: string): Verdict {
  const deleteIt = `if no export runs on these files, delete ${path}`
  if (seen.kind === 'unreadable') {
    if (seen.foreign)
      return {
        take: false,
        message: `${path} is a lock of another version of chat-service, whose rules this one does not know; ${deleteIt}`,
      }
    // No export of this version leaves one (its locks appear whole), so nobody can be holding it.
    const what = seen.size === 0 ? 'empty' : 'not a lock this command can read'
    return {
      take: true,
      note: `${path} was ${what} (left by an export that could not finish writing it, such as on a full disk, by chat-service 0.3 or older): taken over`,
    }
  }
  const { pid, host } = seen.record
  const since = seen.record.since === undefined ? '' : `, since ${seen.record.since}`
  const holder = `pid ${pid} on ${host}${since}`
  const sameSpace = seen.kind === 'record' ? seen.record.space === me.space : host === me.host
  if (sameSpace) {
    const state = processState(pid, seen.kind === 'record' ? seen.record.started : null)
    if (state === 'gone') return { take: true, note: `the export that held ${path} (${holder}) is gone: taken over` }
    const stopped =
      state === 'stopped'
        ? `; it is stopped (Ctrl-Z or SIGSTOP): \`fg\` in its shell or \`kill -CONT ${pid}\` lets it go on, \`kill ${pid}\` ends it`
        : ''
    return { take: false, message: `${subject} (${holder}${stopped}; lock ${path}); ${deleteIt}` }
  }
  const age = Date.now() - seen.mtimeMs
  if (age > LOCK_STALE_MS) {
    return {
      take: true,
      note:
        `the lock ${path} of ${holder} (another machine or container) was not refreshed for ${seconds(age)}: taken over ` +
        '(if that export still runs, it stops before its next write)',
    }
  }
  return {
    take: false,
    message:
      `${subject} (${holder}, another machine or container, which refreshed the lock ${seconds(age)} ago; lock ${path}); ` +
      `it is taken over once not refreshed for ${seconds(LOCK_STALE_MS)}`,
  }
}

/** Claims left by takeovers of instances that are gone (none of them can act any more: see the module comment). */
async function removeOldClaims(path: string, token: string): Promise<void> {
  const prefix = `${basename(path)}.takeover-`
  const names = await readdir(dirname(path)).catch(() => [] as string[])
  for (const name of names) {
    if (name.startsWith(prefix) && name !== `${prefix}${token}`) await rm(join(dirname(path), name), { force: true }).catch(() => undefined)
  }
}

/** The state of one acquisition: who, with which staged record, telling the user what. */
interface Taker {
  readonly me: LockRecord
  readonly staged: Staged
  readonly note: (text: string) => void
}

/** Takes `path` (the lock, or a claim at `depth` > 0); throws {@link LockHeldError} when someone else holds it. */
async function acquire(path: string, taker: Taker, depth: number, subject: string): Promise<void> {
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    if (await publish(taker.staged, path)) return
    const seen = await inspect(path)
    if (seen.kind === 'none') continue // released meanwhile
    const verdict = judge(path, seen, taker.me, subject)
    if (!verdict.take) throw new LockHeldError(verdict.message)
    stopPoint(depth === 0 ? 'lock:judged' : 'claim:judged')
    if (await takeOver(path, seen, taker, depth)) {
      taker.note(verdict.note)
      return
    }
  }
  throw new LockHeldError(`${path} kept changing while this export tried to take it; run it again`)
}

/** Replaces the instance `seen` at `path` with this taker's record, holding that instance's claim; `false` if it changed meanwhile. */
async function takeOver(path: string, seen: Exclude<Seen, { kind: 'none' }>, taker: Taker, depth: number): Promise<boolean> {
  if (depth >= MAX_CLAIM_DEPTH) {
    throw new LockHeldError(
      `${path} and its claims were left by ${MAX_CLAIM_DEPTH} exports that died while taking it over; if no export runs on these files, delete ${path}*`,
    )
  }
  const claim = `${path}.takeover-${seen.identity}`
  await acquire(claim, taker, depth + 1, 'another export is taking over the lock of these files')
  try {
    stopPoint(depth === 0 ? 'lock:claimed' : 'claim:claimed')
    if (!sameInstance(await inspect(path), seen)) return false
    await publishOver(taker.staged, path)
    return true
  } finally {
    // Ours: nobody changes a claim while its holder lives (a claim is a lock too).
    await rm(claim, { force: true })
  }
}

/**
 * Takes the lock `path` of `files` (what it guards, for messages and errors), refreshed every
 * {@link LOCK_REFRESH_MS} ms while held. `note` tells the user when an abandoned lock is taken over.
 * @throws LockHeldError naming the holder (and whether it is stopped) when another export holds it;
 * FileError when the lock cannot be written (a full disk: nothing is left behind).
 */
export async function takeLock(path: string, files: string, note: (text: string) => void): Promise<HeldLock> {
  const me = ownRecord(files)
  const role = `the lock of ${files}`
  const staged = await onFile('create', path, role, () => stage(path, `${JSON.stringify(me)}\n`))
  try {
    await onFile('create', path, role, () => acquire(path, { me, staged, note }, 0, 'another export is running on these files'))
  } catch (error) {
    await staged.discard()
    throw error
  }
  // The lock's file stays open: refreshing its time through it touches this instance only, never one that replaced it.
  const { handle } = staged
  await staged.forget()
  await removeOldClaims(path, me.token)
  stopPoint('lock:held')
  const timer = setInterval(() => {
    const now = new Date()
    void handle.utimes(now, now).catch(() => undefined)
  }, LOCK_REFRESH_MS)
  timer.unref()
  let released = false

  const check = async (): Promise<void> => {
    const seen = await onFile('read', path, role, () => inspect(path))
    if (seen.kind === 'record' && seen.record.token === me.token) return
    const now =
      seen.kind === 'none'
        ? 'the lock file is gone (deleted by hand?)'
        : seen.kind === 'unreadable'
          ? 'the lock file was replaced by one this command cannot read'
          : `it is held by pid ${seen.record.pid} on ${seen.record.host}, since ${seen.record.since ?? '?'}`
    throw new LockLostError(
      `this export lost its lock ${path} (${now}: this export was paused or cut off for over ${seconds(LOCK_STALE_MS)}, or the lock was removed); ` +
        'it stops here without writing more: the files belong to the export that holds the lock now',
    )
  }

  return {
    check,
    async release() {
      if (released) return
      released = true
      clearInterval(timer)
      await handle.close().catch(() => undefined)
      // The claim of this instance makes the removal exclusive against a takeover of it.
      const claim = `${path}.takeover-${me.token}`
      try {
        await link(path, claim)
      } catch {
        return // gone already, or being taken over: not ours to remove
      }
      try {
        const seen = await inspect(claim)
        if (seen.kind === 'record' && seen.record.token === me.token) await rm(path, { force: true })
      } finally {
        await rm(claim, { force: true })
      }
    },
  }
}
