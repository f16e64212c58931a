// Shared helpers of the benchmark suite: statistics, bounded loops, formatting.
import os from 'node:os'

/** Sorted copy of `values`, ascending. */
export function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b)
}

/** Nearest-rank percentile (0–100) of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const s = sorted(values)
  const rank = Math.ceil((p / 100) * s.length)
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))]!
}

/** Median (mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const s = sorted(values)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** Median and min–max of the values of several rounds. */
export interface Spread {
  median: number
  min: number
  max: number
  values: number[]
}

export function spread(values: readonly number[]): Spread {
  const s = sorted(values)
  return { median: median(s), min: s[0] ?? Number.NaN, max: s[s.length - 1] ?? Number.NaN, values: [...values] }
}

/** `1.23 (1.20–1.31)`: the median with the min–max over rounds. */
export function fmtSpread(s: Spread, digits: number, unit = ''): string {
  if (s.values.length <= 1) return `${s.median.toFixed(digits)}${unit}`
  return `${s.median.toFixed(digits)}${unit} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`
}

/** Formats rows as a Markdown table (also readable in a terminal). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n')
}

/** Rotates `items` by `by` places: round r runs the contenders in another order (interleaving). */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const n = items.length
  if (n === 0) return []
  const k = ((by % n) + n) % n
  return [...items.slice(k), ...items.slice(0, k)]
}

/** Runs `gc()` when the process was started with --expose-gc (between contenders, outside timed regions). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc !== undefined) {
    gc()
    gc()
  }
}

/** One line describing the machine: Node version, available parallelism, CPU model, OS. */
export function machineInfo(): { node: string; parallelism: number; cpu: string; platform: string; memoryGiB: number } {
  return {
    node: process.version,
    parallelism: os.availableParallelism(),
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
  }
}

export const MB = 1024 * 1024

/** Throws when the wall-clock budget of a loop is spent: every loop is bounded by count and by time. */
export class Deadline {
  readonly #end: number
  readonly #what: string
  constructor(ms: number, what: string) {
    this.#end = performance.now() + ms
    this.#what = what
  }
  get passed(): boolean {
    return performance.now() > this.#end
  }
  check(): void {
    if (this.passed) throw new Error(`benchmark time budget exceeded: ${this.#what}`)
  }
}
