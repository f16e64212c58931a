/**
 * `chat-service export`: every message of the company as JSON Lines (`listAll`), or, with
 * `--checkpoint`, only the messages added since the last run (`listNew`), resumable after Ctrl-C,
 * SIGTERM, a crash, a failure or a full disk with no gap and no duplicate line.
 *
 * How resuming stays exact: about once a second, once every line written so far is on disk
 * (written and fsynced), the export saves where it stands (the SDK's cursor or checkpoint, taken
 * right after the last line written) together with the output's length at that point, atomically
 * (a temporary file, fsynced, renamed over the old one). A crash can leave lines past the saved
 * point in the output; the next run cuts the output back to the saved length and goes on from the
 * saved point, so those lines are written again exactly once. A write that fails (ENOSPC, EIO)
 * saves nothing more: the last saved state stands, and the next run goes on from it.
 *
 * - Without `--checkpoint`, the state is `OUT.cursor` (`{ version, cursor, bytes, done, shard,
 *   service }`); a finished export deletes it, so the next run starts a new export (and rewrites OUT).
 * - With `--checkpoint CFILE`, CFILE holds the SDK's `MessagesCheckpoint`, the shard and service,
 *   and, while a run is unfinished, where that run writes (`run: { out, bytes, written }`); each
 *   run appends to OUT. Before a run writes its first line, CFILE says so, so that even a crash
 *   before the first save is cut back.
 * - `--out -` (stdout) and outputs that are not regular files are streams: nothing to cut back,
 *   so no cursor; with `--checkpoint`, CFILE is updated only when the run finishes.
 * - Everything that can refuse (options, state files, the SDK's checks of a cursor or checkpoint)
 *   is checked before any file is changed.
 * - A lock (`OUT.cursor.lock`, `CFILE.lock`; lock.ts) keeps every other export off the same files,
 *   checked again before each batch of lines and each save. A `--checkpoint` run into a regular file
 *   takes its output's lock (`OUT.cursor.lock`) too: two runs with other checkpoint files, or a full
 *   export, would otherwise append to one output at once.
 *
 * @module
 */
import { rm, truncate } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { Message, MessagesCheckpoint, resources } from 'chat-service-sdk'
import { APIUserAbortError, MAX_SHARDS, RequestValidationError, StaleCursorError } from 'chat-service-sdk'
import { integerOption, listOption, requiredOption, shardOption, stringOption, UsageError } from './args.ts'
import {
  readCheckpointState,
  readCursorState,
  readPreviousCheckpoints,
  StateError,
  type CheckpointState,
  type CursorState,
  type RunState,
  type ShardText,
  type StateCheck,
} from './export-state.ts'
import {
  directoryOf,
  openFileOutput,
  outputTarget,
  ReaderGone,
  stdoutOutput,
  targetName,
  type Output,
  type Target,
} from './export-output.ts'
import { stopPoint } from './debug.ts'
import { FileError, onFile, removeLeftovers, replaceFile, sameFile, sizeOf } from './files.ts'
import { tailAt, tailOf } from './tail.ts'
import { LockLostError, takeLock, type HeldLock } from './lock.ts'
import { pacedText, progressView, type ProgressStream, type ProgressView } from './progress.ts'
import type { CommandContext } from './resources.ts'

/** How often the state is saved (ms): often enough to lose little, rarely enough that fsync costs nothing. */
const SAVE_EVERY_MS = 1_000
/** How many rewound conversation ids the final message lists. */
const LIST_AT_MOST = 10
/** Requests in flight the SDK allows `listAll` and `listNew` (`concurrency`, 1 to 64). */
export const MAX_CONCURRENCY = 64

/** What the export needs beyond a command's context. */
export interface ExportContext extends CommandContext {
  /** Where progress goes (stderr). */
  readonly progress: ProgressStream
  /** The signal that stopped the run (`SIGINT`, `SIGTERM`), if one did. */
  readonly stoppedBy: () => string | undefined
  /** Lines saying where the base URL and key id came from, for messages that depend on them. */
  readonly settings: () => string
}

type Params = { limit: number; concurrency?: number; shard?: { index: number; count: number } }

/** What every part of one run shares. */
interface Run {
  readonly context: ExportContext
  readonly target: Target
  readonly params: Params
  /** The service and shard, for the first line of progress. */
  readonly where: string
  readonly shard: ShardText
  readonly maxItems: number | undefined
  readonly check: StateCheck
}

/** `export --out FILE|- [--checkpoint CFILE [--previous-checkpoint FILE]...] [--shard I/N] [--concurrency N] [--max-items N]` */
export async function exportMessages(context: ExportContext): Promise<void> {
  const { values, command, client } = context
  // Every usage error first, before any file is looked at.
  const outText = requiredOption(values, 'out', command)
  const checkpointText = stringOption(values, 'checkpoint')
  const previousText = listOption(values, 'previous-checkpoint')
  const shard = shardOption(values, MAX_SHARDS, command)
  const concurrency = integerOption(values, 'concurrency', 1, MAX_CONCURRENCY, command)
  const maxItems = integerOption(values, 'max-items', 1, Number.MAX_SAFE_INTEGER, command)
  if (previousText.length > 0 && checkpointText === undefined) {
    throw new UsageError('--previous-checkpoint needs --checkpoint CFILE: the new checkpoint file the previous ones start', command)
  }
  const checkpointFile = checkpointText === undefined ? undefined : resolve(checkpointText)
  const previous = previousText.map((path) => resolve(path))
  if (checkpointFile !== undefined && outText !== '-' && resolve(outText) === checkpointFile) {
    throw new UsageError('--out and --checkpoint must be different files', command)
  }
  if (checkpointFile !== undefined && previous.includes(checkpointFile)) {
    throw new UsageError('--previous-checkpoint names the --checkpoint file: give the new shard count new checkpoint files', command)
  }
  const target = await outputTarget(outText)
  if (checkpointFile !== undefined) await directoryOf(checkpointFile, 'the checkpoint file')
  const params: Params = { limit: 100, ...(concurrency === undefined ? {} : { concurrency }), ...(shard === undefined ? {} : { shard }) }
  const run: Run = {
    context,
    target,
    params,
    where: `${client.baseUrl}${shard === undefined ? '' : ` (shard ${shard.index} of ${shard.count})`}`,
    shard: shard === undefined ? null : `${shard.index}/${shard.count}`,
    maxItems,
    check: { service: { baseUrl: client.baseUrl, keyId: client.keyId }, settings: context.settings, note: context.note },
  }
  if (checkpointFile !== undefined) await newSinceCheckpoint(run, checkpointFile, previous)
  else if (target.kind === 'file' && target.resumable) await fullExport(run, target)
  else await fullExportToStream(run)
}

/**
 * Runs `body` holding the lock `path` of `files`; releases it after. The holder is the one writer
 * of the state file that the lock guards (`path` without `.lock`): it first removes what a killed
 * run left of that file's temporary copies.
 */
async function withLock(run: Run, path: string, files: string, body: (lock: HeldLock) => Promise<void>): Promise<void> {
  const lock = await takeLock(path, files, run.context.note)
  try {
    const removed = await removeLeftovers(path.replace(/\.lock$/, ''))
    if (removed.length > 0) {
      const named = removed.length > 3 ? `${removed.slice(0, 3).join(', ')} and ${removed.length - 3} more` : removed.join(', ')
      run.context.note(`removed ${removed.length} temporary ${removed.length === 1 ? 'file' : 'files'} that a killed run left: ${named}`)
    }
    await body(lock)
  } finally {
    await lock.release()
  }
}

/**
 * The SDK refused a cursor or checkpoint read from `path` (nothing sent): exit 1, saying so, with
 * where the settings came from when what it refused is the service the checkpoint names.
 */
function refusedState(run: Run, error: unknown, path: string, what: string): unknown {
  if (!(error instanceof RequestValidationError)) return error
  const service = error.issues.some((issue) => issue.path.includes('service'))
  return new StateError(`${path} holds ${what} the SDK refuses: ${error.message}${service ? `\n${run.check.settings()}` : ''}`, {
    cause: error,
  })
}

/**
 * Checks that `path` is the file the unfinished run wrote, up to `bytes` (its saved point; `tail`,
 * the fingerprint of the line that ends there): returns its size. Throws when it is shorter (lines
 * the state counts as written are gone) or holds another line there (another file in its place).
 */
async function checkSaved(path: string, bytes: number, tail: string | undefined, stateFile: string): Promise<number> {
  const size = await onFile('read', path, 'the output of the unfinished run', () => sizeOf(path))
  if (size === undefined || size < bytes) {
    throw new StateError(
      `${stateFile} says ${path} holds ${bytes} bytes written by an unfinished export, but it holds ${size ?? 'nothing'}: ` +
        `restore ${path}, or delete ${stateFile} to export everything again`,
    )
  }
  // Another file put in its place would be cut back and appended to: its line there must be the one saved.
  if (tail !== undefined && (await onFile('read', path, 'the output of the unfinished run', () => tailAt(path, bytes))) !== tail) {
    throw new StateError(
      `${path} is not the file the unfinished export in ${stateFile} wrote: its line before byte ${bytes} is not the last one that export saved ` +
        `(was the file moved or replaced?): restore the file it wrote, or delete ${stateFile} to export everything again`,
    )
  }
  return size
}

/**
 * Cuts `path` back to `bytes`: the lines a crash left past the saved point, written again by this
 * run. Throws as {@link checkSaved} does; with `refuseOverFull`, also when there is something
 * to cut and an unfinished full export has written `path` since ({@link refuseOverFullExport}).
 */
async function cutBack(
  run: Run,
  lock: Pick<HeldLock, 'check'>,
  path: string,
  bytes: number,
  tail: string | undefined,
  stateFile: string,
  refuseOverFull = false,
): Promise<void> {
  const size = await checkSaved(path, bytes, tail, stateFile)
  if (size > bytes) {
    if (refuseOverFull) await refuseOverFullExport(path, stateFile)
    await lock.check()
    run.context.note(`cutting ${path} back from ${size} to ${bytes} bytes: the lines past the saved point are written again`)
    await onFile('cut back', path, 'the output', () => truncate(path, bytes))
  }
}

/**
 * Refuses to cut `path` back when an unfinished full export's cursor file lies beside it: that
 * export has written `path` since the saved point, and its lines would be lost (and its resume
 * then cut this run's). A finished export leaves no such file, so its lines are not seen here.
 */
async function refuseOverFullExport(path: string, stateFile: string): Promise<void> {
  if ((await sizeOf(`${path}.cursor`)) === undefined) return
  throw new StateError(
    `${path}, which the unfinished export in ${stateFile} wrote, has lines past the point it saved and ${path}.cursor beside it: ` +
      `an unfinished full export has written ${path} since, and cutting it back would lose that export's lines. ` +
      `Resume or delete that export (${path}.cursor), then run this command again`,
  )
}

/**
 * Cuts back the output of the unfinished `--checkpoint` run (`path`), refused over an unfinished
 * full export's lines ({@link refuseOverFullExport}). `sameAs`: this run's output when it is that
 * very file (by identity), whose lock `lock` is held. Another file (its name has the date in it,
 * and midnight passed) is checked first and left alone when it ends at its saved point (it may be
 * archived, read-only); else cut under its own lock, which any export writing it holds, its checks
 * made again under it. The same file under another name (a hard link) has a lock of its own: taken
 * too, unless it is the very lock held (a link in the directory's path).
 */
async function cutBackUnfinished(
  run: Run,
  lock: Pick<HeldLock, 'check'>,
  unfinished: { readonly path: string; readonly bytes: number; readonly tail: string | undefined },
  sameAs: string | undefined,
  stateFile: string,
): Promise<void> {
  const { path, bytes, tail } = unfinished
  if (sameAs !== undefined && (sameAs === path || (await sameFile(`${path}.cursor.lock`, `${sameAs}.cursor.lock`)))) {
    await cutBack(run, lock, path, bytes, tail, stateFile, true)
    return
  }
  if ((await checkSaved(path, bytes, tail, stateFile)) === bytes) return
  await refuseOverFullExport(path, stateFile)
  stopPoint('export:other-checked')
  const other = await takeLock(`${path}.cursor.lock`, `${path} (the output of the unfinished run)`, run.context.note)
  try {
    await cutBack(run, bothLocks(lock, other), path, bytes, tail, stateFile, true)
  } finally {
    await other.release()
  }
}

/** `{ tail }` of the output's last line given in this run, for the state; `{}` before its first. */
function tailOfOutput(output: Output): { readonly tail?: string } {
  return output.last === '' ? {} : { tail: tailOf(output.last) }
}

/** How a loop over messages ended. `local`: a file or the lock failed, so nothing more may be written or saved. */
type Ending =
  | { readonly kind: 'complete' | 'stopped' | 'max-items' | 'gone' }
  | { readonly kind: 'failed'; readonly error: unknown; readonly local: boolean }

/** Why the run's signal fired: a signal, stdout's reader gone (EPIPE), or stdout failing (a full disk under `> file`). */
function aborted(context: ExportContext): Ending {
  if (context.stoppedBy() !== undefined || !context.out.gone.aborted) return { kind: 'stopped' }
  const { error } = context.out
  return error === undefined
    ? { kind: 'gone' }
    : { kind: 'failed', error: new FileError('write', 'stdout', 'the output', error), local: true }
}

/** What an error that ended the loop means. */
function endingOf(context: ExportContext, error: unknown): Ending {
  if (error instanceof ReaderGone) return { kind: 'gone' }
  if (error instanceof FileError || error instanceof LockLostError) return { kind: 'failed', error, local: true }
  // The run's signal ends the iteration with APIUserAbortError: our own stop (a signal, or stdout gone).
  if (context.signal.aborted && error instanceof APIUserAbortError) return aborted(context)
  return { kind: 'failed', error, local: false }
}

/** Runs `step` (a last flush and save); a failure becomes the ending. */
async function lastly(context: ExportContext, ending: Ending, step: () => Promise<void>): Promise<Ending> {
  if (ending.kind === 'gone' || (ending.kind === 'failed' && ending.local)) return ending
  try {
    await step()
    return ending
  } catch (error) {
    return endingOf(context, error)
  }
}

/** `; paced at N requests/s by the service's rate limit` when the run's pages are paced (`progress.pacedRate`), else ''. */
function pacedNote(pacedRate: number | undefined): string {
  const paced = pacedText(pacedRate)
  return paced === undefined ? '' : `; ${paced} by the service's rate limit`
}

/**
 * Writes every message of `messages` to `output`, saving state (`save`) about once a second,
 * until the end, a signal, `--max-items`, the reader going away or a failure. Never throws: a
 * failure is the `failed` ending.
 */
async function pump(
  run: Run,
  messages: AsyncIterable<Message>,
  output: Output,
  view: ProgressView,
  progress: () => { done: number; total: number | undefined; pacedRate: number | undefined },
  save: (() => Promise<void>) | undefined,
): Promise<Ending> {
  const { context, maxItems } = run
  let ending: Ending = { kind: 'complete' }
  let written = 0
  let lastSave = performance.now()
  try {
    for await (const message of messages) {
      await output.line(`${JSON.stringify(message)}\n`)
      written++
      if (context.signal.aborted) {
        ending = aborted(context)
        break
      }
      if (written === maxItems) {
        ending = { kind: 'max-items' }
        break
      }
      view.update(progress())
      if (save !== undefined && performance.now() - lastSave >= SAVE_EVERY_MS) {
        // Taken after this line, saved once it is on disk: the output never lacks a line the state says is written.
        await save()
        lastSave = performance.now()
      }
    }
  } catch (error) {
    ending = endingOf(context, error)
  } finally {
    view.update(progress()) // where it ended, not where the last redraw was
    view.stop()
  }
  return ending
}

/**
 * Says how a run that did not finish ended; throws for a failure (exit 1). `resume` says how the
 * next run goes on, or that it cannot (a stream).
 */
function reportUnfinished(context: ExportContext, ending: Ending, done: number, resume: string): void {
  switch (ending.kind) {
    case 'complete':
    case 'gone':
      return
    case 'max-items':
      context.note(`stopped after ${done} messages (--max-items); ${resume}`)
      return
    case 'stopped':
      context.note(`stopped by ${context.stoppedBy() ?? 'a signal'} after ${done} messages; ${resume}`)
      return
    case 'failed': {
      const { error } = ending
      if (error instanceof LockLostError) throw error
      if (error instanceof FileError)
        throw new Error(`${error.message}\n${error.noRoom ? `once there is room, ${resume}` : resume}`, { cause: error })
      const reason = error instanceof Error ? error.message : String(error)
      throw new Error(`export failed after ${done} messages: ${reason}\n${resume}`, { cause: error })
    }
  }
}

/** Without --checkpoint, into a regular file: every message, resumable from `OUT.cursor`. */
async function fullExport(run: Run, target: Extract<Target, { kind: 'file' }>): Promise<void> {
  const { context, params, shard, check } = run
  const out = target.path
  const cursorFile = `${out}.cursor`
  const role = `the cursor file of ${out}`
  await withLock(run, `${cursorFile}.lock`, out, async (lock) => {
    const saved = await readCursorState(cursorFile, shard, check)
    let all
    try {
      all = context.client.conversations.messages.listAll(saved === undefined ? params : { ...params, cursor: saved.cursor }, {
        signal: context.signal,
      })
    } catch (error) {
      throw refusedState(run, error, cursorFile, 'a cursor')
    }
    // Nothing has changed up to here: every refusal is above.
    if (saved !== undefined) await cutBack(run, lock, out, saved.bytes, saved.tail, cursorFile)
    await lock.check()
    const output = await openFileOutput(target, saved === undefined ? 'w' : 'a', () => lock.check())
    stopPoint('export:ready')
    try {
      context.note(`exporting every message from ${run.where}`)
      context.note(
        saved === undefined
          ? `to ${out} (a new export; where it stands is saved in ${cursorFile})`
          : `to ${out}, resuming after message ${saved.done} (from ${cursorFile})`,
      )
      let savedDone = saved?.done ?? 0
      const save = async (): Promise<void> => {
        const at: CursorState = {
          version: 1,
          cursor: all.cursor(),
          bytes: output.bytes,
          ...tailOfOutput(output),
          done: all.progress.done,
          shard,
          service: check.service,
        }
        await output.flush()
        await lock.check()
        await replaceFile(cursorFile, `${JSON.stringify(at)}\n`, role)
        savedDone = at.done
      }
      const view = progressView(context.progress, saved?.done ?? 0)
      let ending = await pump(run, all, output, view, () => all.progress, save)
      if (ending.kind === 'failed' && ending.error instanceof StaleCursorError) {
        // Saving again would only fail again: the data moved under the cursor.
        throw new StateError(
          `cannot resume the export from ${cursorFile}: ${ending.error.message}\n` +
            `delete ${cursorFile} to start a new export (or use --checkpoint, which follows every conversation on its own)`,
          { cause: ending.error },
        )
      }
      // A new export that failed before its first message (a wrong key, a wrong URL) leaves no
      // cursor file: one would tie the next run, its settings mended, to the settings it names.
      const failedAtOnce = ending.kind === 'failed' && saved === undefined && all.progress.done === 0
      if (ending.kind === 'complete' || failedAtOnce) {
        ending = await lastly(context, ending, async () => {
          await output.flush()
          await lock.check()
          await onFile('remove', cursorFile, role, () => rm(cursorFile, { force: true }))
        })
      } else {
        ending = await lastly(context, ending, save)
      }
      const { done, total } = all.progress
      if (failedAtOnce) {
        reportUnfinished(
          context,
          ending,
          0,
          `nothing was exported and ${cursorFile} is not written: mend what the error names, then run the command again`,
        )
        return
      }
      if (ending.kind !== 'complete') {
        reportUnfinished(
          context,
          ending,
          ending.kind === 'failed' ? savedDone : done,
          `run the same command again to go on (after message ${savedDone}, from ${cursorFile})`,
        )
        return
      }
      for (const { parent, yielded } of all.skipped) {
        context.note(`conversation ${parent.id} vanished during the export (${yielded} of its messages exported)`)
      }
      context.note(
        `exported ${done} messages${total === undefined ? '' : ` of ${total} expected`} to ${out}${pacedNote(all.progress.pacedRate)}`,
      )
    } finally {
      await output.close()
    }
  })
}

/** Opens the stream `target` (stdout, or a file that is not a regular one). */
async function openStream(run: Run): Promise<Output> {
  const { target } = run
  return target.kind === 'stdout' ? stdoutOutput(run.context.out) : openFileOutput(target, 'a', () => Promise.resolve())
}

/** Without --checkpoint, into stdout or another stream: every message, not resumable. */
async function fullExportToStream(run: Run): Promise<void> {
  const { context, params } = run
  const all = context.client.conversations.messages.listAll(params, { signal: context.signal })
  const output = await openStream(run)
  try {
    const name = targetName(run.target)
    context.note(`exporting every message from ${run.where}`)
    context.note(`to ${name}, which is not resumable: an interrupted export starts over (give --out a regular file to resume)`)
    const view = progressView(context.progress, 0)
    let ending = await pump(run, all, output, view, () => all.progress, undefined)
    ending = await lastly(context, ending, () => output.flush())
    const { done, total } = all.progress
    if (ending.kind !== 'complete') {
      reportUnfinished(context, ending, done, `${name} is not resumable: nothing is saved`)
      return
    }
    context.note(
      `exported ${done} messages${total === undefined ? '' : ` of ${total} expected`} to ${name}${pacedNote(all.progress.pacedRate)}`,
    )
  } finally {
    await output.close()
  }
}

/** With --checkpoint: only what is new since CFILE (or the previous checkpoints), appended to OUT; CFILE updated. */
async function newSinceCheckpoint(run: Run, checkpointFile: string, previous: readonly string[]): Promise<void> {
  const { context, target } = run
  await withLock(run, `${checkpointFile}.lock`, `${checkpointFile} and its output`, async (checkpointLock) => {
    // The output's own lock too, that of a full export into it: two runs with other checkpoint
    // files, or a full export, would otherwise append to one file at once.
    const outLock =
      target.kind === 'file' && target.resumable ? await takeLock(`${target.path}.cursor.lock`, target.path, context.note) : undefined
    try {
      await fromCheckpoint(run, checkpointFile, previous, outLock === undefined ? checkpointLock : bothLocks(checkpointLock, outLock))
    } finally {
      await outLock?.release()
    }
  })
}

/** The check of both locks as one: each must still be held (newSinceCheckpoint releases them). */
function bothLocks(first: Pick<HeldLock, 'check'>, second: Pick<HeldLock, 'check'>): Pick<HeldLock, 'check'> {
  return {
    check: async () => {
      await first.check()
      await second.check()
    },
  }
}

/** The `--checkpoint` run, holding the lock of CFILE and (a regular file) of its output. */
async function fromCheckpoint(run: Run, checkpointFile: string, previous: readonly string[], lock: Pick<HeldLock, 'check'>): Promise<void> {
  const { context, params, shard, check, target } = run
  const role = 'the checkpoint file'
  const out = targetName(target)
  const saved = await readCheckpointState(checkpointFile, shard, check)
  let start: MessagesCheckpoint | MessagesCheckpoint[] | undefined = saved?.checkpoint
  if (saved === undefined && previous.length > 0) {
    start = await readPreviousCheckpoints(previous, check)
  } else if (previous.length > 0) {
    context.note(`${checkpointFile} exists: this run goes on from it, and the --previous-checkpoint files are not read`)
  }
  let changes
  try {
    changes = context.client.conversations.messages.listNew(start === undefined ? params : { ...params, checkpoint: start }, {
      signal: context.signal,
    })
  } catch (error) {
    throw refusedState(run, error, saved === undefined ? `--previous-checkpoint ${previous.join(' ')}` : checkpointFile, 'a checkpoint')
  }
  // Nothing has changed up to here: every refusal is above.
  const unfinished = saved?.run ?? null
  // By identity, not by name: the same file may be spelled two ways (a link in its path).
  const sameOutput = unfinished !== null && target.kind === 'file' && (await sameFile(unfinished.out, target.path))
  if (unfinished !== null) {
    const path = unfinished.out
    await cutBackUnfinished(
      run,
      lock,
      { path, bytes: unfinished.bytes, tail: unfinished.tail },
      sameOutput ? target.path : undefined,
      checkpointFile,
    )
    if (!sameOutput) context.note(`the unfinished run wrote to ${path}; this run goes on in ${out}`)
  }
  const state = (runState: RunState | null, last: CheckpointState['last']): CheckpointState => ({
    version: 1,
    shard,
    service: check.service,
    checkpoint: changes.checkpoint(),
    run: runState,
    last,
  })
  const resumable = target.kind === 'file' && target.resumable
  await lock.check()
  const output = resumable ? await openFileOutput(target, 'a', () => lock.check()) : await openStream(run)
  stopPoint('export:ready')
  try {
    const resumed = unfinished !== null && sameOutput ? unfinished.written : 0
    const running = (): RunState => ({ out, bytes: output.bytes, ...tailOfOutput(output), written: resumed + changes.progress.done })
    let savedWritten = resumed
    const save = async (): Promise<void> => {
      const at = state(running(), saved?.last ?? null)
      await output.flush()
      await lock.check()
      await replaceFile(checkpointFile, `${JSON.stringify(at)}\n`, role)
      savedWritten = at.run?.written ?? savedWritten
    }
    // Before the first line: a crash from here on is cut back to this length.
    if (resumable) await save()
    context.note(
      saved !== undefined
        ? `exporting the messages added since ${checkpointFile} from ${run.where}`
        : start !== undefined
          ? `exporting the messages added since the previous checkpoints (${previous.join(', ')}) from ${run.where}; ${checkpointFile} is new`
          : `exporting every message from ${run.where} (no ${checkpointFile} yet: this first run writes it)`,
    )
    context.note(
      !resumable
        ? `to ${out}, which is not resumable: ${checkpointFile} is updated only when this run finishes, so an interrupted run's messages are sent again by the next`
        : unfinished === null
          ? `appending to ${out}`
          : `appending to ${out}, resuming an unfinished run${resumed > 0 ? ` after its ${resumed} messages` : ''}`,
    )
    const view = progressView(context.progress, 0)
    let ending = await pump(run, changes, output, view, () => changes.progress, resumable ? save : undefined)
    const written = changes.progress.done
    const summary = changes.summary ?? null
    if (ending.kind === 'complete') {
      ending = await lastly(context, ending, async () => {
        await output.flush()
        await lock.check()
        const finished = state(null, { finishedAt: new Date().toISOString(), out, written: resumed + written, summary })
        await replaceFile(checkpointFile, `${JSON.stringify(finished)}\n`, role)
      })
    } else if (ending.kind === 'failed' && saved === undefined && resumed + written === 0) {
      // A first run that failed before its first message (a wrong key, a wrong URL) does not keep
      // the checkpoint file it began: it would tie the next run, its settings mended, to these.
      ending = await lastly(context, ending, async () => {
        await output.flush()
        await lock.check()
        await onFile('remove', checkpointFile, role, () => rm(checkpointFile, { force: true }))
      })
      reportUnfinished(
        context,
        ending,
        0,
        `nothing was exported and ${checkpointFile} is not kept: mend what the error names, then run the command again`,
      )
      return
    } else {
      ending = await lastly(context, ending, resumable ? save : () => output.flush())
    }
    if (ending.kind !== 'complete') {
      if (!resumable) {
        if (ending.kind === 'gone')
          context.note(
            `the reader of ${out} went away after ${written} messages; ${checkpointFile} is not updated (the next run sends them again)`,
          )
        reportUnfinished(context, ending, written, `${checkpointFile} is not updated: the next run sends this run's messages again`)
        return
      }
      reportUnfinished(
        context,
        ending,
        ending.kind === 'failed' ? savedWritten : resumed + written,
        `run the same command again to go on (after message ${savedWritten}, from ${checkpointFile})`,
      )
      return
    }
    context.note(
      `exported ${written} new messages to ${out}; checkpoint saved in ${checkpointFile}${pacedNote(changes.progress.pacedRate)}`,
    )
    if (summary !== null) reportSummary(context, summary)
  } finally {
    await output.close()
  }
}

/** What the scan found, for the log of a nightly job. */
function reportSummary(context: CommandContext, summary: resources.ListNewSummary): void {
  const { rewound, deleted } = summary
  context.note(
    `conversations: ${summary.new} new, ${summary.grown} grown, ${summary.unchanged} unchanged, ${rewound.length} rewound, ${deleted.length} deleted` +
      (summary.scans > 1 ? ` (the list changed while it was read: ${summary.scans} scans)` : ''),
  )
  if (rewound.length > 0) {
    const ids =
      rewound.slice(0, LIST_AT_MOST).join(', ') + (rewound.length > LIST_AT_MOST ? `, and ${rewound.length - LIST_AT_MOST} more` : '')
    context.note(
      `rewound (their stored messages no longer match the checkpoint, so they were read again from their first message and some lines repeat earlier ones; message ids tell them apart): ${ids}`,
    )
  }
  if (!summary.complete) {
    context.note('the conversation list kept changing while it was read: conversations it did not list are read by the next run')
  }
}
