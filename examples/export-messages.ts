// Exports every message of every conversation as JSON Lines (one message per line, in the order of
// the nested loop: conversations in the service's order, each conversation's messages oldest
// first), with `client.conversations.messages.listAll`. Resumable:
//
//   npm run export-messages -- messages.jsonl     # writes messages.jsonl, saves messages.jsonl.cursor as it goes
//   (Ctrl-C, a crash, a lost connection)
//   npm run export-messages -- messages.jsonl     # appends from where it stopped: no duplicate, no gap
//
// Progress goes to stderr: a progress bar with rate and ETA on a terminal, a plain line every 2 s
// otherwise (CI, a pipe, a log file). Against the real service when CHAT_SERVICE_BASE_URL,
// CHAT_SERVICE_KEY_ID and CHAT_SERVICE_KEY_SECRET are set, else against the embedded fake.
//
// How resuming stays exact: about once a second, once every line written so far is on disk
// (flushed and fsynced), the example saves `{ cursor, bytes }` (the iteration's cursor and the
// output's length at that point) to `<output>.cursor`, atomically (a temporary file, fsynced, then
// renamed over the old one). A crash can leave lines after the saved point in the output; the next
// run cuts the output back to `bytes` and resumes from `cursor`, so those lines are written again
// exactly once. Ctrl-C (SIGINT) or SIGTERM stops cleanly: the loop ends, the output is flushed and
// fsynced, the cursor is saved, and the exit status is 130 or 143. A second Ctrl-C exits at once
// (the last saved cursor still resumes exactly). A finished export deletes the cursor file, so the
// next run starts a new export.
import { once } from 'node:events'
import type { WriteStream } from 'node:fs'
import { open, readFile, rename, rm, stat, truncate, type FileHandle } from 'node:fs/promises'
import { dirname } from 'node:path'
import { SingleBar } from 'cli-progress'
import { APIUserAbortError, type ListAllProgress } from 'chat-service-sdk'
import { connect } from './connect.ts'

const output = process.argv[2] ?? 'messages.jsonl'
const cursorFile = `${output}.cursor`
/** How often the cursor is saved (ms): often enough to lose little, rarely enough that fsync costs nothing. */
const SAVE_EVERY_MS = 1_000
/** How often the progress is updated (ms). */
const SHOW_EVERY_MS = 100
/** How often the plain progress line is printed when stderr is not a terminal (ms). */
const PLAIN_EVERY_MS = 2_000
/** Exit statuses of a run stopped by a signal: 128 + the signal's number, as shells report it. */
const EXIT_STATUS = { SIGINT: 130, SIGTERM: 143 } as const

/** What `<output>.cursor` holds: where to resume, and how long the output was at that point. */
interface Checkpoint {
  readonly version: 1
  readonly cursor: string
  /** Bytes of the output file written before `cursor` (every line up to the last message yielded). */
  readonly bytes: number
  /** Messages written before `cursor`, for the reader. */
  readonly done: number
}

async function readCheckpoint(): Promise<Checkpoint | undefined> {
  let text: string
  try {
    text = await readFile(cursorFile, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const saved = JSON.parse(text) as Partial<Checkpoint>
  if (saved.version !== 1 || typeof saved.cursor !== 'string' || !Number.isSafeInteger(saved.bytes) || !Number.isSafeInteger(saved.done)) {
    throw new Error(`${cursorFile} is not a cursor file of this example; delete it to start a new export`)
  }
  return saved as Checkpoint
}

/** Replaces the cursor file in one step: a crash leaves the old one or the new one, never half of one. */
async function saveCheckpoint(checkpoint: Checkpoint): Promise<void> {
  const temporary = `${cursorFile}.tmp`
  const file = await open(temporary, 'w')
  try {
    await file.writeFile(`${JSON.stringify(checkpoint)}\n`)
    await file.sync()
  } finally {
    await file.close()
  }
  await rename(temporary, cursorFile)
  // Make the rename itself durable. Not every platform can open a directory (Windows cannot): then the rename is what we have.
  const directory = await open(dirname(cursorFile), 'r').catch(() => undefined)
  await directory?.sync().catch(() => undefined)
  await directory?.close()
}

/** Resolves once every line written to `out` so far is in the file and on disk. */
async function flushToDisk(out: WriteStream, file: FileHandle): Promise<void> {
  // Writes complete in order, so an empty write's callback runs after every earlier line is written.
  await new Promise<void>((resolve, reject) => {
    out.write('', (error) => {
      if (error) reject(error)
      else resolve()
    })
  })
  await file.sync()
}

/** Progress on stderr: a bar on a terminal, plain periodic lines elsewhere. */
interface ProgressView {
  update(progress: ListAllProgress): void
  stop(): void
}

/** Messages a second over the last 10 s: an average since the start would hide a slowdown for too long. */
class RateMeter {
  static readonly SAMPLE_MS = 250
  static readonly SAMPLES = 40
  readonly #samples: { at: number; done: number }[]

  constructor(done: number) {
    this.#samples = [{ at: performance.now(), done }]
  }

  /** Messages a second, given `done` now. */
  perSecond(done: number): number {
    const now = performance.now()
    const last = this.#samples[this.#samples.length - 1] as { at: number }
    if (now - last.at >= RateMeter.SAMPLE_MS) {
      this.#samples.push({ at: now, done })
      if (this.#samples.length > RateMeter.SAMPLES) this.#samples.shift()
    }
    const first = this.#samples[0] as { at: number; done: number }
    return now > first.at ? ((done - first.done) * 1000) / (now - first.at) : 0
  }
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?'
  const s = Math.round(seconds)
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
      : `${s}s`
}

/** Rate and time left as shown, from the meter (not `eta`: cli-progress fills its own `{eta}`). */
function figures(meter: RateMeter, { done, total }: ListAllProgress): { rate: string; timeLeft: string } {
  const rate = meter.perSecond(done)
  return {
    rate: Math.round(rate).toLocaleString('en'),
    timeLeft: total === undefined ? '?' : duration(Math.max(0, total - done) / rate),
  }
}

function progressView(startDone: number): ProgressView {
  const meter = new RateMeter(startDone)
  if (process.stderr.isTTY) {
    // cli-progress draws the bar on stderr; rate and ETA are ours (its own ETA, from its last few
    // updates, swings wildly when a whole page of messages arrives at once).
    const bar = new SingleBar({
      format: 'messages {bar} {percentage}% | {value}/{total} | {rate}/s | ETA {timeLeft}',
      hideCursor: true,
      fps: 10,
    })
    let started = false
    return {
      update(progress) {
        const { done, total } = progress
        if (total === undefined) return // the conversation list is still being read
        if (!started) {
          bar.start(Math.max(total, done), done, figures(meter, progress))
          started = true
        } else {
          bar.setTotal(Math.max(total, done)) // message_count can be a little stale
          bar.update(done, figures(meter, progress))
        }
      },
      stop() {
        if (started) bar.stop()
      },
    }
  }
  let latest: ListAllProgress = { done: startDone, total: undefined }
  const line = (): string => {
    const { done, total } = latest
    const { rate, timeLeft } = figures(meter, latest)
    const of = total === undefined ? '' : ` of ${total}`
    const share = total === undefined || total === 0 ? '' : ` (${((100 * done) / total).toFixed(1)}%)`
    return `exported ${done}${of} messages${share}, ${rate} messages/s, ETA ${timeLeft}\n`
  }
  const timer = setInterval(() => {
    process.stderr.write(line())
  }, PLAIN_EVERY_MS)
  timer.unref()
  return {
    update(progress) {
      latest = progress
    },
    stop() {
      clearInterval(timer)
    },
  }
}

const checkpoint = await readCheckpoint()
let bytes = 0
if (checkpoint !== undefined) {
  const size = await stat(output).then(
    (s) => s.size,
    () => undefined,
  )
  if (size === undefined || size < checkpoint.bytes) {
    throw new Error(
      `${cursorFile} says ${output} holds ${checkpoint.bytes} bytes, but it holds ${size ?? 'nothing'}: ` +
        `restore ${output}, or delete ${cursorFile} to start a new export`,
    )
  }
  // Lines written after the cursor was saved (a crash): cut them, they come again from the cursor.
  if (size > checkpoint.bytes) await truncate(output, checkpoint.bytes)
  bytes = checkpoint.bytes
}

// Signals before the loop starts are kept too: the loop then ends before its first message.
const stop = new AbortController()
let stoppedBy: keyof typeof EXIT_STATUS | undefined
const onSignal = (signal: keyof typeof EXIT_STATUS): void => {
  if (stoppedBy !== undefined) process.exit(EXIT_STATUS[signal]) // a second signal: at once; the saved cursor still holds
  stoppedBy = signal
  stop.abort()
}
process.on('SIGINT', onSignal)
process.on('SIGTERM', onSignal)

const file = await open(output, checkpoint === undefined ? 'w' : 'a')
const out = file.createWriteStream() // closes the file when it ends
const { client, description, close } = await connect()
process.stderr.write(`Exporting from ${description}\n`)
process.stderr.write(
  checkpoint === undefined
    ? `to ${output} (a new export; the cursor is saved in ${cursorFile})\n`
    : `to ${output}, resuming after message ${checkpoint.done} (from ${cursorFile})\n`,
)

const all = client.conversations.messages.listAll(checkpoint === undefined ? {} : { cursor: checkpoint.cursor }, { signal: stop.signal })
const view = progressView(checkpoint?.done ?? 0)
let failure: unknown
let lastSave = performance.now()
let lastShown = 0
try {
  for await (const message of all) {
    const line = `${JSON.stringify(message)}\n`
    bytes += Buffer.byteLength(line)
    if (!out.write(line)) await once(out, 'drain')
    if (stoppedBy !== undefined) break
    // A redraw a message would cost more than the export itself: ten a second are plenty.
    if (performance.now() - lastShown >= SHOW_EVERY_MS) {
      view.update(all.progress)
      lastShown = performance.now()
    }
    if (performance.now() - lastSave >= SAVE_EVERY_MS) {
      // Taken after this line, saved once it is on disk: the output never lacks a line the cursor says is written.
      const at: Checkpoint = { version: 1, cursor: all.cursor(), bytes, done: all.progress.done }
      await flushToDisk(out, file)
      await saveCheckpoint(at)
      lastSave = performance.now()
    }
  }
} catch (error) {
  // The caller's signal ends the iteration with APIUserAbortError: that is our own stop.
  if (!(stoppedBy !== undefined && error instanceof APIUserAbortError)) failure = error
} finally {
  view.update(all.progress) // where it ended, not where the last redraw was
  view.stop()
}

const { done, total } = all.progress
try {
  await flushToDisk(out, file)
  out.end()
  await once(out, 'finish')
  if (stoppedBy === undefined && failure === undefined) {
    await rm(cursorFile, { force: true })
    for (const { parent, yielded } of all.skipped) {
      process.stderr.write(`conversation ${parent.id} vanished during the export (${yielded} of its messages exported)\n`)
    }
    process.stderr.write(`exported ${done} messages${total === undefined ? '' : ` of ${total} expected`} to ${output}\n`)
  } else {
    // Stopped or failed: save where to resume (the iteration's cursor is right after the last line written).
    await saveCheckpoint({ version: 1, cursor: all.cursor(), bytes, done })
    if (failure !== undefined) {
      process.stderr.write(
        `export failed after ${done} messages: ${failure instanceof Error ? failure.message : JSON.stringify(failure)}\n`,
      )
      process.exitCode = 1
    } else {
      process.exitCode = EXIT_STATUS[stoppedBy as keyof typeof EXIT_STATUS]
      process.stderr.write(`stopped by ${stoppedBy} after ${done} messages\n`)
    }
    process.stderr.write(`run the same command again to resume (${cursorFile})\n`)
  }
} finally {
  await close()
  process.off('SIGINT', onSignal)
  process.off('SIGTERM', onSignal)
}
