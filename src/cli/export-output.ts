/**
 * Where the export's lines go: a regular file it can resume into, or a stream it cannot (stdout
 * with `--out -`, or a FILE that is not a regular file: /dev/stdout, a FIFO, a terminal). Lines
 * are written in batches; before each batch the export's lock is checked (`fence`), so that an
 * export that lost its lock writes nothing more. Every write error is a {@link FileError} naming
 * the output and the errno; a reader that went away (EPIPE) is {@link ReaderGone}, never an
 * 'error' event nobody listens to.
 *
 * @module
 */
import { realpath, stat, type FileHandle } from 'node:fs/promises'
import { open } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { codeOf, FileError, onFile } from './files.ts'
import type { Stdout } from './output.ts'

/** Bytes gathered before a batch is written (and the lock checked): a check costs a read of the lock file. */
const BATCH_BYTES = 64 * 1024
/** How long a line may wait for its batch (ms). */
const WRITE_AFTER_MS = 100

/** The reader of a stream output went away (`| head`): what was wanted was written. */
export class ReaderGone extends Error {
  override readonly name = 'ReaderGone'
}

/** What `--out` names. */
export type Target = { readonly kind: 'stdout' } | { readonly kind: 'file'; readonly path: string; readonly resumable: boolean }

/** Where the export writes, as the user names it in messages. */
export function targetName(target: Target): string {
  return target.kind === 'stdout' ? 'stdout' : target.path
}

/** A system error of `code` with `text` as its description (`ENOENT: its directory /x does not exist`). */
function systemError(code: string, text: string): Error {
  return Object.assign(new Error(`${code}: ${text}`), { code })
}

/**
 * What `--out TEXT` names: `-` is stdout; a regular file (or none yet, in a directory that
 * exists) can be resumed into; anything else (a FIFO, a device, a path in /dev or /proc such as
 * /dev/stdout) is written as a stream.
 * @throws FileError naming the output when its directory does not exist.
 */
export async function outputTarget(text: string): Promise<Target> {
  if (text === '-') return { kind: 'stdout' }
  const path = resolve(text)
  const stats = await stat(path).catch((error: unknown) => {
    if (codeOf(error) === 'ENOENT') return undefined
    throw new FileError('use', path, 'the output', error)
  })
  if (stats === undefined) {
    await directoryOf(path, 'the output')
    return { kind: 'file', path, resumable: true }
  }
  const real = await realpath(path).catch(() => path)
  const special = /^\/(dev|proc)\//.test(path) || /^\/(dev|proc)\//.test(real)
  return { kind: 'file', path, resumable: stats.isFile() && !special }
}

/** Checks that the directory of `path` exists. @throws FileError naming `path` (and `role`) when it does not. */
export async function directoryOf(path: string, role: string): Promise<void> {
  const directory = dirname(path)
  const stats = await stat(directory).catch((error: unknown) => {
    if (codeOf(error) === 'ENOENT')
      throw new FileError('write', path, role, systemError('ENOENT', `its directory ${directory} does not exist`))
    throw new FileError('write', path, role, error)
  })
  if (!stats.isDirectory()) throw new FileError('write', path, role, systemError('ENOTDIR', `${directory} is not a directory`))
}

/** Where the lines go; see the module comment. */
export interface Output {
  /** The output as the user names it: its path, or `stdout`. */
  readonly name: string
  /** Bytes of the output: what it held when opened, plus every line given since (written or not yet). */
  readonly bytes: number
  /** The last line given (with its newline), `''` before any: what `bytes` ends with. */
  readonly last: string
  /** Adds one line; writes a batch when enough are gathered. @throws FileError, ReaderGone, and what `fence` throws */
  line(text: string): Promise<void>
  /** Writes every line given so far, and (a file) makes it durable. @throws as line() */
  flush(): Promise<void>
  /** Closes it; lines not flushed are dropped. */
  close(): Promise<void>
}

/**
 * An output that writes batches with `write` after `fence()` resolves, one at a time: when
 * {@link BATCH_BYTES} are gathered, when lines have waited {@link WRITE_AFTER_MS} (a slow page
 * keeps nothing back for long), and on flush. A failed write fails every later call.
 */
abstract class Batches implements Output {
  abstract readonly name: string
  bytes: number
  last = ''
  readonly #fence: () => Promise<void>
  #pending: string[] = []
  #pendingBytes = 0
  /** The batch being written, if one is: the next waits for it. */
  #writing: Promise<void> = Promise.resolve()
  #failure: { readonly error: unknown } | undefined
  #timer: NodeJS.Timeout | undefined

  constructor(bytes: number, fence: () => Promise<void>) {
    this.bytes = bytes
    this.#fence = fence
  }

  protected abstract write(chunk: Buffer): Promise<void>
  protected abstract sync(): Promise<void>
  protected abstract release(): Promise<void>

  #throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure.error
  }

  async line(text: string): Promise<void> {
    this.#throwIfFailed()
    const size = Buffer.byteLength(text)
    this.#pending.push(text)
    this.#pendingBytes += size
    this.bytes += size
    this.last = text
    if (this.#pendingBytes >= BATCH_BYTES) {
      await this.#writePending()
    } else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        this.#writePending().catch(() => undefined) // kept in #failure: the next call throws it
      }, WRITE_AFTER_MS)
      this.#timer.unref()
    }
  }

  /** Writes what is pending, after the batch being written. */
  #writePending(): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const batch = this.#writing.then(async () => {
      this.#throwIfFailed()
      if (this.#pending.length === 0) return
      const chunk = Buffer.from(this.#pending.join(''))
      this.#pending = []
      this.#pendingBytes = 0
      await this.#fence() // this export still holds its lock: nobody else writes these files
      await this.write(chunk)
    })
    this.#writing = batch.catch((error: unknown) => {
      this.#failure ??= { error }
    })
    return batch
  }

  async flush(): Promise<void> {
    await this.#writePending()
    await this.sync()
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    await this.#writing
    await this.release()
  }
}

/** A file: a regular one (resumable: opened to append or anew, fsynced on flush), or a device or FIFO (a stream). */
class FileOutput extends Batches {
  readonly name: string
  readonly #handle: FileHandle
  readonly #durable: boolean

  constructor(path: string, handle: FileHandle, bytes: number, durable: boolean, fence: () => Promise<void>) {
    super(bytes, fence)
    this.name = path
    this.#handle = handle
    this.#durable = durable
  }

  protected async write(chunk: Buffer): Promise<void> {
    let offset = 0
    try {
      // A short write (a disk filling up) goes on from where it stopped, or fails with the errno.
      while (offset < chunk.length) offset += (await this.#handle.write(chunk, offset, chunk.length - offset)).bytesWritten
    } catch (error) {
      if (codeOf(error) === 'EPIPE') throw new ReaderGone('the reader went away')
      throw new FileError('write', this.name, 'the output', error)
    }
  }

  protected async sync(): Promise<void> {
    if (this.#durable) await onFile('write', this.name, 'the output', () => this.#handle.sync())
  }

  protected async release(): Promise<void> {
    await this.#handle.close().catch(() => undefined)
  }
}

/**
 * Opens the file of `target`: `'a'` appends (a resumed or nightly run), `'w'` starts it anew;
 * a stream target is always appended to. `fence` runs before each batch.
 * @throws FileError naming the output
 */
export async function openFileOutput(
  target: Extract<Target, { kind: 'file' }>,
  flags: 'a' | 'w',
  fence: () => Promise<void>,
): Promise<Output> {
  const { path, resumable } = target
  return onFile('open', path, 'the output', async () => {
    const handle = await open(path, resumable ? flags : 'a')
    try {
      const bytes = resumable ? (await handle.stat()).size : 0
      return new FileOutput(path, handle, bytes, resumable, fence)
    } catch (error) {
      await handle.close()
      throw error
    }
  })
}

/** stdout (`--out -`), through the command's {@link Stdout} (backpressure; EPIPE seen as the reader going away). */
class StdoutOutput extends Batches {
  readonly name = 'stdout'
  readonly #out: Stdout

  constructor(out: Stdout) {
    super(0, () => Promise.resolve())
    this.#out = out
  }

  #failed(): void {
    if (this.#out.error !== undefined) throw new FileError('write', 'stdout', 'the output', this.#out.error)
    if (this.#out.gone.aborted) throw new ReaderGone('the reader went away')
  }

  protected async write(chunk: Buffer): Promise<void> {
    this.#failed()
    await this.#out.write(chunk.toString())
    this.#failed()
  }

  protected async sync(): Promise<void> {
    await this.#out.drained()
    this.#failed()
  }

  protected async release(): Promise<void> {
    // stdout stays open: the process ends it.
  }
}

/** The export's output on stdout. */
export function stdoutOutput(out: Stdout): Output {
  return new StdoutOutput(out)
}
