/**
 * The export's progress on stderr: on a terminal, a bar (cli-progress, bundled into the bin) with
 * the rate and the time left; elsewhere (cron, CI, a log file) a plain line every few seconds.
 *
 * @module
 */
import { SingleBar } from 'cli-progress'

/** How far an export is: messages written, messages expected once known, and the client's paced rate. */
export interface Progress {
  readonly done: number
  readonly total: number | undefined
  /** Requests a second the export's pages are paced at after a 429 (its iteration's `progress.pacedRate`: the client's rate, or their endpoint's own where lower); `undefined` while not paced. */
  readonly pacedRate?: number | undefined
}

/** Shows progress; `update` may be called often (it redraws at most ten times a second). */
export interface ProgressView {
  update(progress: Progress): void
  /** Draws the last state and leaves the terminal line (or the timer) alone. */
  stop(): void
}

/** The stream the view writes to (stderr). */
export interface ProgressStream extends NodeJS.WritableStream {
  readonly isTTY?: boolean | undefined
}

/** How often the plain line is written when stderr is not a terminal (ms). */
export const PLAIN_EVERY_MS = 5_000
/** How often the bar is redrawn at most (ms): a redraw a message would cost more than the export. */
const DRAW_EVERY_MS = 100

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

/** Seconds as `42s`, `3m07s` or `2h05m`; `?` when unknown. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?'
  const s = Math.round(seconds)
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${s}s`
}

/** `paced at 87 requests/s` (after a 429 the service's rate limit sets the pace), or `undefined`. */
export function pacedText(pacedRate: number | undefined): string | undefined {
  if (pacedRate === undefined) return undefined
  return `paced at ${pacedRate >= 10 ? Math.round(pacedRate) : pacedRate.toFixed(1)} requests/s`
}

/** Rate, time left, share and pace as shown. */
function figures(
  meter: RateMeter,
  { done, total, pacedRate }: Progress,
): { rate: string; timeLeft: string; share: string; of: string; paced: string } {
  const rate = meter.perSecond(done)
  const known = total !== undefined
  const paced = pacedText(pacedRate)
  return {
    rate: Math.round(rate).toLocaleString('en'),
    timeLeft: known ? duration(Math.max(0, total - done) / rate) : '?',
    share: known && total > 0 ? `${((100 * Math.min(done, total)) / total).toFixed(1)}%` : '?',
    of: known ? String(Math.max(total, done)) : '?',
    paced: paced === undefined ? '' : ` | ${paced}`,
  }
}

/** A view for `stream`: a bar on a terminal, plain lines every {@link PLAIN_EVERY_MS} ms elsewhere. */
export function progressView(stream: ProgressStream, startDone: number, label = 'messages'): ProgressView {
  const meter = new RateMeter(startDone)
  let latest: Progress = { done: startDone, total: undefined }
  if (stream.isTTY === true) {
    // Rate and ETA are ours: cli-progress's own ETA, from its last few updates, swings wildly when
    // a whole page of messages arrives at once. The bar stays empty until the total is known.
    const bar = new SingleBar({
      format: `${label} {bar} {share} | {value}/{of} | {rate}/s | ETA {timeLeft}{paced}`,
      hideCursor: true,
      fps: 10,
      stream,
    })
    let lastDrawn = 0
    const draw = (): void => {
      const { done, total } = latest
      bar.setTotal(total === undefined ? Number.MAX_SAFE_INTEGER : Math.max(total, done)) // message_count can be a little stale
      bar.update(done, figures(meter, latest))
    }
    bar.start(Number.MAX_SAFE_INTEGER, startDone, figures(meter, latest))
    return {
      update(progress) {
        latest = progress
        if (performance.now() - lastDrawn < DRAW_EVERY_MS) return
        lastDrawn = performance.now()
        draw()
      },
      stop() {
        draw()
        bar.stop()
      },
    }
  }
  const line = (): string => {
    const { rate, timeLeft, share, of } = figures(meter, latest)
    const paced = pacedText(latest.pacedRate)
    return `exported ${latest.done} of ${of} ${label} (${share}), ${rate} ${label}/s, ETA ${timeLeft}${paced === undefined ? '' : `, ${paced}`}\n`
  }
  const timer = setInterval(() => stream.write(line()), PLAIN_EVERY_MS)
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
