// Allocation benchmark: bytes allocated per call for one page of 100 messages (issue 9 goal: the
// SDK at most 1.5× the raw-undici floor). Runs bench/alloc-client.ts in a child process with a
// young generation large enough that no GC runs inside a measured batch (method: see that file).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { FLOOR, SDK, STRICT_FLOOR } from './contenders.ts'
import type { ServerInfo } from './fake.ts'
import { ratioStat, spread, type RatioStat, type Spread } from './lib.ts'

export interface AllocConfig {
  rounds: number
  /** Sequential calls per measured batch. */
  batch: number
  warmUp: number
  budgetMs: number
  /** More contenders, by bench/contenders.ts's names (e.g. `sdk-at:DIR`, an older build). */
  extra?: readonly string[]
}

export interface AllocFigures {
  name: string
  /** Bytes per call: V8 heap, ArrayBuffer backing stores, and their sum; median (min–max) over rounds. */
  heap: Spread
  external: Spread
  total: Spread
  /** Per-round ratio of `total` against the floor's. */
  vsFloor: Spread
  /** The same per-round ratios as a geometric mean with its 95 % confidence interval. */
  vsFloorStat: RatioStat
  /** Per-round ratio of `heap` against the floor's. */
  heapVsFloor: Spread
}

export interface AllocResult {
  pageBytes: number
  batch: number
  /** Batches thrown away because a GC ran during them. */
  discarded: number
  figures: AllocFigures[]
}

interface Sample {
  heap: number
  external: number
}

/** V8 flags of the child: 128 MB semi-spaces (a batch allocates well under that, so no scavenge runs). */
export const ALLOC_FLAGS = ['--expose-gc', '--min-semi-space-size=128', '--max-semi-space-size=128']

export async function allocation(server: ServerInfo, config: AllocConfig): Promise<AllocResult> {
  const child = spawn(process.execPath, [...ALLOC_FLAGS, new URL('./alloc-client.ts', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      BENCH_SERVER: JSON.stringify(server),
      BENCH_ROUNDS: String(config.rounds),
      BENCH_BATCH: String(config.batch),
      BENCH_WARMUP: String(config.warmUp),
      BENCH_EXTRA: (config.extra ?? []).join(','),
    },
  })
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => (out += chunk))
  const killer = setTimeout(() => child.kill('SIGKILL'), config.budgetMs)
  const [code] = (await once(child, 'exit')) as [number | null]
  clearTimeout(killer)
  if (code !== 0) throw new Error(`alloc client exited with ${String(code)}: ${out}`)
  const result = JSON.parse(out.trim().split('\n').pop() ?? '') as {
    pageBytes: number
    batch: number
    discarded: number
    samples: Record<string, Sample[]>
  }
  const floor = result.samples[FLOOR]!
  const total = (s: Sample): number => s.heap + s.external
  const figures = Object.entries(result.samples).map(([name, samples]) => ({
    name,
    heap: spread(samples.map((s) => s.heap)),
    external: spread(samples.map((s) => s.external)),
    total: spread(samples.map(total)),
    vsFloor: spread(samples.map((s, i) => total(s) / total(floor[i]!))),
    vsFloorStat: ratioStat(samples.map((s, i) => total(s) / total(floor[i]!))),
    heapVsFloor: spread(samples.map((s, i) => s.heap / floor[i]!.heap)),
  }))
  // The SDK row second, right after the floor: the goal row.
  figures.sort((a, b) => order(a.name) - order(b.name))
  return { pageBytes: result.pageBytes, batch: result.batch, discarded: result.discarded, figures }
}

function order(name: string): number {
  return name === FLOOR ? 0 : name === SDK ? 1 : name === STRICT_FLOOR ? 2 : 3
}
