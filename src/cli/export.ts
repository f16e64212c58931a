/**
 * `chat-service export`: every message of the company as JSON Lines (`listAll`), or, with
 * `--checkpoint`, only the messages added since the last run (`listNew`), resumable after Ctrl-C,
 * SIGTERM, a crash or a failure with no gap and no duplicate line.
 *
 * How resuming stays exact: about once a second, once every line written so far is on disk
 * (flushed and fsynced), the export saves where it stands (the SDK's cursor or checkpoint, taken
 * right after the last line written) together with the output's length at that point, atomically
 * (a temporary file, fsynced, renamed over the old one). A crash can leave lines past the saved
 * point in the output; the next run cuts the output back to the saved length and goes on from the
 * saved point, so those lines are written again exactly once.
 *
 * - Without `--checkpoint`, the state is `OUT.cursor` (`{ version, cursor, bytes, done, shard }`);
 *   a finished export deletes it, so the next run starts a new export (and rewrites OUT).
 * - With `--checkpoint CFILE`, CFILE holds the SDK's `MessagesCheckpoint` and, while a run is
 *   unfinished, where that run writes (`run: { out, bytes, written }`); each run appends to OUT.
 *   Before a run writes its first line, CFILE says so, so that even a crash before the first save
 *   is cut back.
 * - A lock (`OUT.cursor.lock`, `CFILE.lock`) keeps two exports off the same files.
 *
 * @module
 */
import { once } from 'node:events'
import type { WriteStream } from 'node:fs'
import { open, truncate, rm, type FileHandle } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { ListNewSummary, Message, MessagesCheckpoint } from 'chat-service-sdk'
import { APIUserAbortError, MAX_SHARDS, StaleCursorError } from 'chat-service-sdk'
import { integerOption, requiredOption, shardOption, stringOption, UsageError } from './args.ts'
import { flushToDisk, readIfExists, replaceFile, sizeOf, takeLock, type Lock } from './files.ts'
import { progressView, type ProgressStream, type ProgressView } from './progress.ts'
import type { CommandContext } from './resources.ts'

/** How often the state is saved (ms): often enough to lose little, rarely enough that fsync costs nothing. */
const SAVE_EVERY_MS = 1_000
/** How many rewound conversation ids the final message lists. */
const LIST_AT_MOST = 10

/** What the export needs beyond a command's context. */
export interface ExportContext extends CommandContext {
  /** Where progress goes (stderr). */
  readonly progress: ProgressStream
  /** The signal that stopped the run (`SIGINT`, `SIGTERM`), if one did. */
  readonly stoppedBy: () => string | undefined
}

/** `I/N`, as the shard is written in state files and messages. */
type ShardText = string | null

/** `OUT.cursor`: where a full export stands. */
interface CursorState {
  readonly version: 1
  readonly cursor: string
  /** Bytes of OUT written before `cursor` (every line up to the last message written). */
  readonly bytes: number
  /** Messages written before `cursor`, across resumes. */
  readonly done: number
  readonly shard?: ShardText | undefined
}

/** An unfinished `--checkpoint` run: where it writes, and how far. */
interface RunState {
  /** The absolute path of the output it appends to. */
  readonly out: string
  /** Bytes of `out` up to the last line the checkpoint counts. */
  readonly bytes: number
  /** Messages it has written. */
  readonly written: number
}

/** CFILE: the nightly export's state. */
interface CheckpointState {
  readonly version: 1
  readonly shard: ShardText
  readonly checkpoint: MessagesCheckpoint
  /** The run that has not finished, if one has not. */
  readonly run: RunState | null
  /** The last run that finished. */
  readonly last: {
    readonly finishedAt: string
    readonly out: string
    readonly written: number
    readonly summary: ListNewSummary | null
  } | null
}

/** A state file that this command did not write, or that does not fit this command line: exit status 1. */
class StateError extends Error {
  override readonly name = 'StateError'
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0

async function readJson(path: string, what: string): Promise<Record<string, unknown> | undefined> {
  const text = await readIfExists(path)
  if (text === undefined) return undefined
  try {
    const value: unknown = JSON.parse(text)
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {
    // reported below
  }
  throw new StateError(`${path} is not ${what}`)
}

async function readCursorState(path: string, shard: ShardText): Promise<CursorState | undefined> {
  const state = await readJson(path, 'a cursor file of chat-service export; delete it to start a new export')
  if (state === undefined) return undefined
  if (state['version'] !== 1 || typeof state['cursor'] !== 'string' || !isCount(state['bytes']) || !isCount(state['done'])) {
    throw new StateError(`${path} is not a cursor file of chat-service export; delete it to start a new export`)
  }
  const saved = (state['shard'] as ShardText | undefined) ?? null
  if (saved !== shard) {
    throw new StateError(
      `${path} is an unfinished export of ${saved === null ? 'all shards' : `shard ${saved}`}, not ${shard === null ? 'all shards' : `shard ${shard}`}: ` +
        `finish it with ${saved === null ? 'no --shard' : `--shard ${saved}`}, or delete ${path} to start a new export`,
    )
  }
  return state as unknown as CursorState
}

async function readCheckpointState(path: string, shard: ShardText): Promise<CheckpointState | undefined> {
  const what = 'a checkpoint file of chat-service export --checkpoint'
  const state = await readJson(path, what)
  if (state === undefined) return undefined
  const run = state['run'] as Partial<RunState> | null | undefined
  const checkpoint = state['checkpoint']
  if (
    state['version'] !== 1 ||
    checkpoint === null ||
    typeof checkpoint !== 'object' ||
    (run != null && (typeof run.out !== 'string' || !isCount(run.bytes) || !isCount(run.written)))
  ) {
    throw new StateError(`${path} is not ${what}`)
  }
  const saved = (state['shard'] as ShardText | undefined) ?? null
  if (saved !== shard) {
    throw new StateError(
      `${path} holds the checkpoint of ${saved === null ? 'a whole export' : `shard ${saved}`}, and this run is ${shard === null ? 'a whole export' : `shard ${shard}`}: ` +
        `keep the same --shard from run to run, each shard with its own checkpoint file`,
    )
  }
  return {
    version: 1,
    shard: saved,
    checkpoint: checkpoint as MessagesCheckpoint,
    run: (run as RunState | null | undefined) ?? null,
    last: (state['last'] as CheckpointState['last']) ?? null,
  }
}

/**
 * Cuts `path` back to `bytes`: the lines a crash left past the saved point. Throws when it is
 * shorter than that (lines the state counts as written are gone).
 */
async function cutBack(path: string, bytes: number, stateFile: string, context: CommandContext): Promise<void> {
  const size = await sizeOf(path)
  if (size === undefined || size < bytes) {
    throw new StateError(
      `${stateFile} says ${path} holds ${bytes} bytes written by an unfinished export, but it holds ${size ?? 'nothing'}: ` +
        `restore ${path}, or delete ${stateFile} to export everything again`,
    )
  }
  if (size > bytes) {
    context.note(`cutting ${path} back from ${size} to ${bytes} bytes: the lines past the saved point are written again`)
    await truncate(path, bytes)
  }
}

/** The output file being written, with its byte count. */
class Output {
  readonly path: string
  readonly #handle: FileHandle
  readonly #stream: WriteStream
  /** Bytes of the file: what it held when opened, plus every line written since. */
  bytes: number

  private constructor(path: string, handle: FileHandle, bytes: number) {
    this.path = path
    this.#handle = handle
    this.#stream = handle.createWriteStream() // closes the file when it ends
    this.bytes = bytes
  }

  /** Opens `path` to append (`'a'`), or to write anew (`'w'`). */
  static async open(path: string, flags: 'a' | 'w'): Promise<Output> {
    const handle = await open(path, flags)
    const bytes = flags === 'w' ? 0 : (await handle.stat()).size
    return new Output(path, handle, bytes)
  }

  async line(message: Message): Promise<void> {
    const text = `${JSON.stringify(message)}\n`
    this.bytes += Buffer.byteLength(text)
    if (!this.#stream.write(text)) await once(this.#stream, 'drain')
  }

  /** Resolves once every line written so far is on disk. */
  flush(): Promise<void> {
    return flushToDisk(this.#stream, this.#handle)
  }

  async close(): Promise<void> {
    await this.flush()
    this.#stream.end()
    await once(this.#stream, 'finish')
  }
}

/** How a loop over messages ended. */
type Ending = { kind: 'complete' } | { kind: 'stopped' } | { kind: 'max-items' } | { kind: 'failed'; error: unknown }

/**
 * Writes every message of `messages` to `output`, saving state (`save`, given the bytes written)
 * about once a second once the lines are on disk, until the end, a signal, `--max-items` or a
 * failure; then flushes and closes the output. Never throws for an error of the iteration: it is
 * the `failed` ending.
 */
async function pump(
  context: ExportContext,
  messages: AsyncIterable<Message>,
  output: Output,
  maxItems: number | undefined,
  view: ProgressView,
  progress: () => { done: number; total: number | undefined },
  save: () => Promise<void>,
): Promise<Ending> {
  let ending: Ending = { kind: 'complete' }
  let written = 0
  let lastSave = performance.now()
  try {
    for await (const message of messages) {
      await output.line(message)
      written++
      if (context.signal.aborted) {
        ending = { kind: 'stopped' }
        break
      }
      if (written === maxItems) {
        ending = { kind: 'max-items' }
        break
      }
      view.update(progress())
      if (performance.now() - lastSave >= SAVE_EVERY_MS) {
        // Taken after this line, saved once it is on disk: the output never lacks a line the state says is written.
        await save()
        lastSave = performance.now()
      }
    }
  } catch (error) {
    // The run's signal ends the iteration with APIUserAbortError: that is our own stop.
    ending = context.signal.aborted && error instanceof APIUserAbortError ? { kind: 'stopped' } : { kind: 'failed', error }
  } finally {
    view.update(progress()) // where it ended, not where the last redraw was
    view.stop()
  }
  return ending
}

/** The message and exit of a run that did not finish; throws for a failure. */
function reportUnfinished(context: ExportContext, ending: Ending, done: number, stateFile: string): void {
  const again = `run the same command again to go on (from ${stateFile})`
  if (ending.kind === 'failed') {
    const reason = ending.error instanceof Error ? ending.error.message : String(ending.error)
    throw new Error(`export failed after ${done} messages: ${reason}\n${again}`, { cause: ending.error })
  }
  if (ending.kind === 'max-items') context.note(`stopped after ${done} messages (--max-items); ${again}`)
  else context.note(`stopped by ${context.stoppedBy() ?? 'a signal'} after ${done} messages; ${again}`)
}

/** `export --out FILE [--checkpoint CFILE] [--shard I/N] [--concurrency N] [--max-items N]` */
export async function exportMessages(context: ExportContext): Promise<void> {
  const { values, command } = context
  const out = resolve(requiredOption(values, 'out', command))
  const checkpointFile = stringOption(values, 'checkpoint')
  const shard = shardOption(values, MAX_SHARDS, command)
  const concurrency = integerOption(values, 'concurrency', 1, Number.MAX_SAFE_INTEGER, command)
  const maxItems = integerOption(values, 'max-items', 1, Number.MAX_SAFE_INTEGER, command)
  if (checkpointFile !== undefined && resolve(checkpointFile) === out)
    throw new UsageError('--out and --checkpoint must be different files', command)
  const shardText: ShardText = shard === undefined ? null : `${shard.index}/${shard.count}`
  const params = { limit: 100, ...(concurrency === undefined ? {} : { concurrency }), ...(shard === undefined ? {} : { shard }) }
  const where = `${context.client.baseUrl}${shard === undefined ? '' : ` (shard ${shard.index} of ${shard.count})`}`
  if (checkpointFile === undefined) await fullExport(context, out, params, where, shardText, maxItems)
  else await newSinceCheckpoint(context, out, resolve(checkpointFile), params, where, shardText, maxItems)
}

type Params = { limit: number; concurrency?: number; shard?: { index: number; count: number } }

async function withLock(stateFile: string, run: () => Promise<void>): Promise<void> {
  const lock: Lock = await takeLock(`${stateFile}.lock`)
  try {
    await run()
  } finally {
    await lock.release()
  }
}

/** Without --checkpoint: every message, resumable from `OUT.cursor`. */
async function fullExport(
  context: ExportContext,
  out: string,
  params: Params,
  where: string,
  shard: ShardText,
  maxItems: number | undefined,
): Promise<void> {
  const cursorFile = `${out}.cursor`
  await withLock(cursorFile, async () => {
    const saved = await readCursorState(cursorFile, shard)
    if (saved !== undefined) await cutBack(out, saved.bytes, cursorFile, context)
    const all = context.client.conversations.messages.listAll(saved === undefined ? params : { ...params, cursor: saved.cursor }, {
      signal: context.signal,
    })
    const output = await Output.open(out, saved === undefined ? 'w' : 'a')
    context.note(`exporting every message from ${where}`)
    context.note(
      saved === undefined
        ? `to ${out} (a new export; where it stands is saved in ${cursorFile})`
        : `to ${out}, resuming after message ${saved.done} (from ${cursorFile})`,
    )
    const state = (): CursorState => ({ version: 1, cursor: all.cursor(), bytes: output.bytes, done: all.progress.done, shard })
    const save = async (): Promise<void> => {
      const at = state()
      await output.flush()
      await replaceFile(cursorFile, `${JSON.stringify(at)}\n`)
    }
    const view = progressView(context.progress, saved?.done ?? 0)
    const ending = await pump(context, all, output, maxItems, view, () => all.progress, save)
    await output.close()
    const { done, total } = all.progress
    if (ending.kind === 'failed' && ending.error instanceof StaleCursorError) {
      // Saving again would only fail again: the data moved under the cursor.
      throw new StateError(
        `cannot resume the export from ${cursorFile}: ${ending.error.message}\n` +
          `delete ${cursorFile} to start a new export (or use --checkpoint, which follows every conversation on its own)`,
        { cause: ending.error },
      )
    }
    if (ending.kind !== 'complete') {
      await replaceFile(cursorFile, `${JSON.stringify(state())}\n`)
      reportUnfinished(context, ending, done, cursorFile)
      return
    }
    await rm(cursorFile, { force: true })
    for (const { parent, yielded } of all.skipped) {
      context.note(`conversation ${parent.id} vanished during the export (${yielded} of its messages exported)`)
    }
    context.note(`exported ${done} messages${total === undefined ? '' : ` of ${total} expected`} to ${out}`)
  })
}

/** With --checkpoint: only what is new since CFILE, appended to OUT; CFILE updated. */
async function newSinceCheckpoint(
  context: ExportContext,
  out: string,
  checkpointFile: string,
  params: Params,
  where: string,
  shard: ShardText,
  maxItems: number | undefined,
): Promise<void> {
  await withLock(checkpointFile, async () => {
    const saved = await readCheckpointState(checkpointFile, shard)
    const unfinished = saved?.run ?? null
    if (unfinished !== null) {
      await cutBack(unfinished.out, unfinished.bytes, checkpointFile, context)
      if (unfinished.out !== out) context.note(`the unfinished run wrote to ${unfinished.out}; this run goes on in ${out}`)
    }
    const changes = context.client.conversations.messages.listNew(
      saved === undefined ? params : { ...params, checkpoint: saved.checkpoint },
      {
        signal: context.signal,
      },
    )
    const output = await Output.open(out, 'a')
    const resumed = unfinished !== null && unfinished.out === out ? unfinished.written : 0
    const state = (run: RunState | null, last: CheckpointState['last']): CheckpointState => ({
      version: 1,
      shard,
      checkpoint: changes.checkpoint(),
      run,
      last,
    })
    const running = (): RunState => ({ out, bytes: output.bytes, written: resumed + changes.progress.done })
    const save = async (): Promise<void> => {
      const at = state(running(), saved?.last ?? null)
      await output.flush()
      await replaceFile(checkpointFile, `${JSON.stringify(at)}\n`)
    }
    // Before the first line: a crash from here on is cut back to this length.
    await save()
    context.note(
      saved === undefined
        ? `exporting every message from ${where} (no ${checkpointFile} yet: this first run writes it)`
        : `exporting the messages added since ${checkpointFile} from ${where}`,
    )
    context.note(
      unfinished === null
        ? `appending to ${out}`
        : `appending to ${out}, resuming an unfinished run${resumed > 0 ? ` after its ${resumed} messages` : ''}`,
    )
    const view = progressView(context.progress, 0)
    const ending = await pump(context, changes, output, maxItems, view, () => changes.progress, save)
    await output.close()
    const written = changes.progress.done
    if (ending.kind !== 'complete') {
      await replaceFile(checkpointFile, `${JSON.stringify(state(running(), saved?.last ?? null))}\n`)
      reportUnfinished(context, ending, resumed + written, checkpointFile)
      return
    }
    const summary = changes.summary ?? null
    const finished = state(null, { finishedAt: new Date().toISOString(), out, written: resumed + written, summary })
    await replaceFile(checkpointFile, `${JSON.stringify(finished)}\n`)
    context.note(`exported ${written} new messages to ${out}; checkpoint saved in ${checkpointFile}`)
    if (summary !== null) reportSummary(context, summary)
  })
}

/** What the scan found, for the log of a nightly job. */
function reportSummary(context: CommandContext, summary: ListNewSummary): void {
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
