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

/**
 * A ratio B / A measured once per round (the two sides adjacent in time), summarised as the
 * geometric mean over rounds with a 95 % confidence interval: Student's t on the per-round log
 * ratios (a ratio's noise is multiplicative; the mean of its logs is the log of the geometric
 * mean). `half` is the interval's half-width as a fraction (0.012: ±1.2 %): the smallest change a
 * run of this many rounds can tell from no change at all is about that.
 */
export interface RatioStat {
  /** Geometric mean of the per-round ratios. */
  mean: number
  /** 95 % confidence interval of the geometric mean. */
  lo: number
  hi: number
  /** Half-width of the interval, relative: (hi − lo) / 2 / mean. */
  half: number
  /** Median and min–max of the per-round ratios. */
  spread: Spread
  /** Standard deviation of the per-round log ratios (≈ relative spread of one round). */
  sdLog: number
}

/** Two-sided 95 % quantile of Student's t with `df` degrees of freedom (Cornish–Fisher expansion; exact tabled values below 4). */
export function t95(df: number): number {
  if (df < 1) return Number.NaN
  const small = [12.706, 4.303, 3.182]
  if (df <= 3) return small[df - 1]!
  const z = 1.959964
  const z3 = z ** 3
  const z5 = z ** 5
  const z7 = z ** 7
  return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df ** 2) + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df ** 3)
}

/** {@link RatioStat} of per-round ratios. */
export function ratioStat(ratios: readonly number[]): RatioStat {
  const logs = ratios.map(Math.log)
  const n = logs.length
  const mean = logs.reduce((a, b) => a + b, 0) / n
  const sd = n > 1 ? Math.sqrt(logs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : Number.NaN
  const margin = n > 1 ? t95(n - 1) * (sd / Math.sqrt(n)) : Number.NaN
  const g = Math.exp(mean)
  const lo = Math.exp(mean - margin)
  const hi = Math.exp(mean + margin)
  return { mean: g, lo, hi, half: (hi - lo) / 2 / g, spread: spread(ratios), sdLog: sd }
}

/** `1.023× [1.011–1.035] (±1.2 %)`: geometric mean, 95 % interval, half-width. */
export function fmtRatio(r: RatioStat | undefined, digits = 3): string {
  if (r === undefined) return '–'
  if (!Number.isFinite(r.lo)) return `${r.mean.toFixed(digits)}×`
  return `${r.mean.toFixed(digits)}× [${r.lo.toFixed(digits)}–${r.hi.toFixed(digits)}] (±${(r.half * 100).toFixed(1)} %)`
}
