/**
 * What `chat-service` writes on stdout: lists and single results as a table (for a person at a
 * terminal), JSON (one value; a list is one array) or JSON Lines (one value a line, for pipes),
 * streamed item by item, with backpressure, and stopped quietly when the reader goes away
 * (`| head`). Text from the service is made safe for a terminal before it reaches one.
 *
 * @module
 */
import type { Format } from './commands.ts'

/** The parts of a writable stream (stdout) that {@link Stdout} uses. */
export interface OutputStream {
  write(chunk: string, callback?: (error?: Error | null) => void): boolean
  on(event: 'error', listener: (error: Error) => void): unknown
  once(event: 'drain' | 'close', listener: () => void): unknown
  /** `true` on a terminal. */
  readonly isTTY?: boolean | undefined
  /** The terminal's width in characters, on a terminal. */
  readonly columns?: number | undefined
}

/**
 * stdout, written with backpressure. When the reader goes away (EPIPE: `chat-service ... | head`)
 * it stops writing and fires {@link Stdout.gone}, so that a list stops requesting pages; any
 * other write error is kept in {@link Stdout.error} (the command fails with it).
 */
export class Stdout {
  readonly #stream: OutputStream
  readonly #gone = new AbortController()
  /** A write error other than EPIPE (a full disk under `> file`), if one happened. */
  error: Error | undefined

  constructor(stream: OutputStream) {
    this.#stream = stream
    stream.on('error', (error: Error & { code?: string }) => {
      if (error.code !== 'EPIPE') this.error ??= error
      this.#gone.abort()
    })
  }

  /** `true` when stdout is a terminal. */
  get isTTY(): boolean {
    return this.#stream.isTTY === true
  }

  /** The terminal's width, when stdout is one. */
  get columns(): number | undefined {
    return this.isTTY ? this.#stream.columns : undefined
  }

  /** Fires once nothing more can be written (the reader went away, or a write failed). */
  get gone(): AbortSignal {
    return this.#gone.signal
  }

  /** Resolves once everything written so far has been handed to the system (or nothing more can be written). */
  async drained(): Promise<void> {
    if (this.#gone.signal.aborted) return
    const gone = this.#gone.signal
    await new Promise<void>((resolve) => {
      const done = (): void => {
        gone.removeEventListener('abort', done)
        resolve()
      }
      // Writes complete in order: the callback of an empty write runs after every earlier one.
      this.#stream.write('', done)
      gone.addEventListener('abort', done, { once: true })
    })
  }

  /** Writes `text`; resolves when the stream can take more (at once unless its buffer is full). */
  async write(text: string): Promise<void> {
    if (this.#gone.signal.aborted) return
    if (this.#stream.write(text)) return
    const gone = this.#gone.signal
    await new Promise<void>((resolve) => {
      const done = (): void => {
        gone.removeEventListener('abort', done)
        resolve()
      }
      this.#stream.once('drain', done)
      gone.addEventListener('abort', done, { once: true })
    })
  }
}

/** Characters a terminal would act on rather than show: C0 and C1 controls, DEL, and bidirectional overrides ("Trojan Source"). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu

/** `text` with every character a terminal would act on written as an escape (`\n`, `\u001b`). */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, (char) => {
    if (char === '\n') return '\\n'
    if (char === '\t') return '\\t'
    if (char === '\r') return '\\r'
    return `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`
  })
}

/** A value as one table cell: text made safe, objects as compact JSON, null and absent as empty. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return terminalText(value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  return terminalText(JSON.stringify(value))
}

/** One column of a table: its header (the field's name) and how to read it from an item. */
export interface Column<T> {
  readonly header: string
  readonly value: (item: T) => unknown
}

const graphemes = new Intl.Segmenter()

/** Width in characters as a person counts them (grapheme clusters: an emoji with its modifiers is one). */
function width(text: string): number {
  let n = 0
  for (const _ of graphemes.segment(text)) n++
  return n
}

/** `text` cut to `max` characters, the last one an ellipsis when cut. */
function fit(text: string, max: number): string {
  if (width(text) <= max) return text
  let kept = ''
  let n = 0
  for (const { segment } of graphemes.segment(text)) {
    if (++n >= max) break
    kept += segment
  }
  return `${kept}…`
}

/** Rows a table reads before it fixes its column widths (one page at the default size). */
const TABLE_BATCH = 100
/** Widest a column other than the last may be. */
const MAX_COLUMN = 40
/** The last column gets what the terminal has left, but at least this. */
const MIN_LAST_COLUMN = 20
const GAP = '  '

/** Writes items one by one in a format; `end()` finishes the output (the closing `]` of json). */
export interface ListWriter<T> {
  item(value: T): Promise<void>
  end(): Promise<void>
}

/** Writes a list in `format`; `columns` are the table's. */
export function listWriter<T>(format: Format, columns: readonly Column<T>[], out: Stdout): ListWriter<T> {
  switch (format) {
    case 'jsonl':
      return { item: (value) => out.write(`${JSON.stringify(value)}\n`), end: async () => {} }
    case 'json': {
      let count = 0
      return {
        item: (value) => out.write(`${count++ === 0 ? '[\n' : ',\n'}${JSON.stringify(value, null, 2).replace(/^/gm, '  ')}`),
        end: () => out.write(count === 0 ? '[]\n' : '\n]\n'),
      }
    }
    case 'table':
      return tableWriter(columns, out)
  }
}

function tableWriter<T>(columns: readonly Column<T>[], out: Stdout): ListWriter<T> {
  let pending: string[][] | undefined = []
  let widths: number[] = []
  const line = (cells: readonly string[]): string =>
    `${cells
      .map((cell, i) => (i === cells.length - 1 ? fit(cell, widths[i] ?? Infinity) : fit(cell, widths[i] ?? 0).padEnd(widths[i] ?? 0)))
      .join(GAP)
      .trimEnd()}\n`
  const flush = async (): Promise<void> => {
    const rows = pending ?? []
    pending = undefined
    const headers = columns.map((column) => column.header)
    widths = headers.map((header, i) => Math.min(MAX_COLUMN, Math.max(width(header), ...rows.map((row) => width(row[i] ?? '')))))
    const terminal = out.columns
    const used = widths.slice(0, -1).reduce((sum, w) => sum + w + GAP.length, 0)
    widths[widths.length - 1] = terminal === undefined || terminal <= 0 ? Infinity : Math.max(MIN_LAST_COLUMN, terminal - used)
    await out.write([headers, ...rows].map(line).join(''))
  }
  return {
    async item(value) {
      const cells = columns.map((column) => cellText(column.value(value)))
      if (pending === undefined) return out.write(line(cells))
      pending.push(cells)
      if (pending.length >= TABLE_BATCH) await flush()
    },
    async end() {
      if (pending !== undefined) await flush()
    },
  }
}

/** Writes one result in `format`; `rows` are the label and value of each line of the table. */
export async function writeSingle(
  format: Format,
  value: unknown,
  rows: readonly (readonly [string, unknown])[],
  out: Stdout,
): Promise<void> {
  switch (format) {
    case 'jsonl':
      return out.write(`${JSON.stringify(value)}\n`)
    case 'json':
      return out.write(`${JSON.stringify(value, null, 2)}\n`)
    case 'table': {
      const labelWidth = Math.max(...rows.map(([label]) => width(label)))
      return out.write(rows.map(([label, cell]) => `${label.padEnd(labelWidth)}${GAP}${cellText(cell)}`.trimEnd() + '\n').join(''))
    }
  }
}
