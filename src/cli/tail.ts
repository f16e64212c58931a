/**
 * The fingerprint of the output's last line, kept in the export's state with its length, so that a
 * resume can tell that the file it cuts back is the one the unfinished run wrote: an operator who
 * moved the output away and put another file in its place (longer than the saved point) had that
 * file cut back and appended to, with a torn line where they met.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { open } from 'node:fs/promises'

/** Longest line looked for before the saved point (bytes): a message line is far shorter. */
const MAX_LINE_BYTES = 4 * 1024 * 1024

/** The fingerprint of one line (with its newline): the first 16 hex digits of its SHA-256. */
export function tailOf(line: string | Buffer): string {
  return createHash('sha256').update(line).digest('hex').slice(0, 16)
}

/**
 * The fingerprint of the line of `path` that ends at byte `bytes` (its newline the byte before),
 * or `undefined` when no line ends there (the byte before is not a newline, or the file is shorter).
 */
export async function tailAt(path: string, bytes: number): Promise<string | undefined> {
  if (bytes <= 0) return undefined
  const from = Math.max(0, bytes - MAX_LINE_BYTES)
  const handle = await open(path, 'r')
  try {
    const window = Buffer.alloc(bytes - from)
    const { bytesRead } = await handle.read(window, 0, window.length, from)
    if (bytesRead < window.length || window[window.length - 1] !== 0x0a) return undefined
    const start = window.lastIndexOf(0x0a, window.length - 2) + 1
    if (start === 0 && from > 0) return undefined // no line start within reach
    return tailOf(window.subarray(start))
  } finally {
    await handle.close()
  }
}
