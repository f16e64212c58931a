// Memory benchmark: the client iterates 1,000,000 messages in its own child process
// (bench/memory-client.ts), the fake service runs in another; the child reports its peak RSS.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import type { ServerInfo } from './fake.ts'
import { rotate, spread, type Spread } from './lib.ts'

export interface MemoryConfig {
  rounds: number
  messages: number
  prefetch: readonly number[]
  runBudgetMs: number
}

export interface MemoryRun {
  mode: string
  prefetch: number
  messages: number
  pages: number
  wallMs: number
  rssAtStart: number
  sampledPeakRss: number
  peakHeapUsed: number
  finalRss: number
  maxRss: number
  heapUsedAfterGc: number
  rssAt100k: number
  rssEvery100k: number[]
  atPeak: NodeJS.MemoryUsage
}

export interface MemoryFigures {
  label: string
  prefetch: number | undefined
  maxRss: Spread
  rssAtStart: Spread
  peakHeapUsed: Spread
  heapUsedAfterGc: Spread
  rssAt100k: Spread
  /** RSS after every 100,000 messages, in the first round. */
  rssCurve: number[]
  /** heapTotal when RSS peaked: how far V8 grew its heap (mostly the young generation). */
  heapTotalAtPeak: Spread
  wallMs: Spread
  /** Whether this row is the SDK as users run it (default flags): the goal applies to these rows. */
  goalRow: boolean
}

/** Runs bench/memory-client.ts once in a fresh Node process and returns what it printed. */
export async function runClientChild(
  server: ServerInfo,
  env: Record<string, string>,
  budgetMs: number,
  nodeFlags: readonly string[] = [],
): Promise<MemoryRun> {
  const script = new URL('./memory-client.ts', import.meta.url).pathname
  const child = spawn(process.execPath, [...nodeFlags, script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_SERVER: JSON.stringify(server), BENCH_BUDGET_MS: String(budgetMs), ...env },
  })
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => (out += chunk))
  const killer = setTimeout(() => child.kill('SIGKILL'), budgetMs + 10_000)
  const [code] = (await once(child, 'exit')) as [number | null]
  clearTimeout(killer)
  if (code !== 0) throw new Error(`memory client exited with ${code}: ${out}`)
  return JSON.parse(out.trim().split('\n').pop() ?? '') as MemoryRun
}

export async function memory(server: ServerInfo, config: MemoryConfig, log: (line: string) => void): Promise<MemoryFigures[]> {
  const n = config.messages.toLocaleString('en-US')
  const iterate = (p: number): Record<string, string> => ({
    BENCH_MODE: 'iterate',
    BENCH_MESSAGES: String(config.messages),
    BENCH_PREFETCH: String(p),
  })
  const settings: { label: string; env: Record<string, string>; flags: string[]; prefetch: number | undefined; goalRow: boolean }[] = [
    {
      label: 'baseline: Node + SDK loaded, nothing sent',
      env: { BENCH_MODE: 'baseline', BENCH_MESSAGES: '0' },
      flags: [],
      prefetch: undefined,
      goalRow: false,
    },
    {
      label: `raw undici floor (SDK pool settings, reset: false, body.json()), ${n} messages`,
      env: { BENCH_MODE: 'raw', BENCH_MESSAGES: String(config.messages) },
      flags: [],
      prefetch: undefined,
      goalRow: false,
    },
    ...config.prefetch.map((p) => ({ label: `SDK, ${n} messages, prefetch ${p}`, env: iterate(p), flags: [], prefetch: p, goalRow: true })),
    {
      label: `SDK, ${n} messages, prefetch 0, --max-semi-space-size=16`,
      env: iterate(0),
      flags: ['--max-semi-space-size=16'],
      prefetch: 0,
      goalRow: false,
    },
  ]
  const runs = new Map<string, MemoryRun[]>(settings.map((s) => [s.label, []]))
  for (let round = 0; round < config.rounds; round++) {
    const started = performance.now()
    for (const s of rotate(settings, round))
      runs.get(s.label)!.push(await runClientChild(server, s.env, config.runBudgetMs, ['--expose-gc', ...s.flags]))
    log(`  memory round ${round + 1}/${config.rounds}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }
  return settings.map((s) => {
    const r = runs.get(s.label)!
    return {
      label: s.label,
      prefetch: s.prefetch,
      maxRss: spread(r.map((x) => x.maxRss)),
      rssAtStart: spread(r.map((x) => x.rssAtStart)),
      peakHeapUsed: spread(r.map((x) => x.peakHeapUsed)),
      heapUsedAfterGc: spread(r.map((x) => x.heapUsedAfterGc)),
      rssAt100k: spread(r.map((x) => x.rssAt100k)),
      rssCurve: r[0]?.rssEvery100k ?? [],
      heapTotalAtPeak: spread(r.map((x) => x.atPeak.heapTotal)),
      goalRow: s.goalRow,
      wallMs: spread(r.map((x) => x.wallMs)),
    }
  })
}
