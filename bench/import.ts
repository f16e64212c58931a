// Import and construct (issue 32): what a process pays before its first call, the SDK
// (`import('chat-service-sdk')` + `new ChatServiceClient(...)`) against undici and zod alone
// (`import('undici')`, `import('zod')`, an undici Agent with the SDK pool's settings). Goal: ≤ 1.05×.
//
// Method (timing, the default). Every measurement is a FRESH process (bench/import-child.ts): a
// module loaded once is cached, so only a new process shows the cost a service pays at start. The
// sides alternate within a round in mirrored order (A B B A, the next round B A A B), so a load that
// drifts during a round weighs on both sides; each side's two processes are averaged per round,
// and the ratio is taken per round (its processes ran next to each other in time) and summarised
// as a geometric mean with a 95 % confidence interval (Student's t on the log ratios). Per process:
// wall time and CPU time (`process.cpuUsage()`, user + system, all threads) of the section, and
// the wall time from the process's start to the section's end. Node's compile cache is off
// (NODE_DISABLE_COMPILE_CACHE=1): a library cannot count on an application turning it on.
//
// Method (--instructions N): N processes per side under `valgrind --tool=callgrind` (`setarch -R`,
// V8's `--predictable` mode with fixed seeds: one thread, so background compiling is counted on
// it, and nothing that depends on timing), the
// section's instructions read from the dump that the child's marks frame. A count, not a time: the
// load does not move it (see BENCHMARKS.md for how far it repeats).
//
//   npm run bench:import                                  40 rounds, floor against the SDK
//   npm run bench:import -- --rounds 60 --sides floor,sdk,sdk-at:.bench-out/baseline-<commit>
//   npm run bench:import -- --instructions 3 --sides floor,sdk            callgrind counts
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { basename, join } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { fmtRatio, fmtSpread, median, ratioStat, spread, table } from './lib.ts'

const { values } = parseArgs({
  options: {
    sides: { type: 'string', default: 'floor,sdk' },
    rounds: { type: 'string', default: '40' },
    instructions: { type: 'string' },
  },
})
const sides = values.sides.split(',').filter((s) => s !== '')
if (sides.length < 2) throw new Error('--sides needs at least two sides (the first is the reference)')
const child = new URL('./import-child.ts', import.meta.url).pathname
const env: NodeJS.ProcessEnv = { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1' }
delete env['NODE_COMPILE_CACHE']
delete env['NODE_OPTIONS']
const out = (line = ''): void => void process.stdout.write(`${line}\n`)
const log = (line: string): void => void process.stderr.write(`${line}\n`)
const load = (): string => os.loadavg()[0]!.toFixed(2)
const label = (side: string): string =>
  side.startsWith('sdk-at:')
    ? `SDK at ${basename(side.slice(7))}`
    : side === 'sdk'
      ? 'SDK'
      : side === 'sdk-import'
        ? 'SDK, import only'
        : 'undici + zod (floor)'

interface Figures {
  wallMs: number
  cpuMs: number
  sinceStartMs: number
}

async function once1(side: string): Promise<Figures> {
  const proc = spawn(process.execPath, [child, side], { stdio: ['ignore', 'pipe', 'inherit'], env })
  let text = ''
  proc.stdout.setEncoding('utf8')
  proc.stdout.on('data', (chunk: string) => (text += chunk))
  const [code] = (await once(proc, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`import-child ${side} exited with ${String(code)}`)
  return JSON.parse(text.trim()) as Figures
}

async function timing(rounds: number): Promise<void> {
  const load0 = load()
  // Warm the file system cache and the binary: the first process of a run reads from disk.
  for (const side of sides) await once1(side)
  const per = new Map<string, Figures[]>(sides.map((s) => [s, []]))
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? sides : [...sides].reverse()
    const got = new Map<string, Figures[]>(sides.map((s) => [s, []]))
    for (const side of [...order, ...[...order].reverse()]) got.get(side)!.push(await once1(side))
    for (const side of sides) {
      const [a, b] = got.get(side)!
      per.get(side)!.push({
        wallMs: (a!.wallMs + b!.wallMs) / 2,
        cpuMs: (a!.cpuMs + b!.cpuMs) / 2,
        sinceStartMs: (a!.sinceStartMs + b!.sinceStartMs) / 2,
      })
    }
    if ((r + 1) % 10 === 0) log(`round ${r + 1}/${rounds}, load ${load()}`)
  }
  const ref = per.get(sides[0]!)!
  out(
    `## Import and construct: ${rounds} rounds, each side twice per round in a fresh process (A B B A / B A A B); load ${load0} → ${load()}`,
  )
  out()
  out(
    table(
      [
        'side',
        'section wall ms',
        'section CPU ms',
        'start → constructed, ms',
        `wall / ${label(sides[0]!)}`,
        `CPU / ${label(sides[0]!)}`,
        'start→constructed /',
      ],
      sides.map((side) => {
        const f = per.get(side)!
        const ratio = (key: keyof Figures): string =>
          side === sides[0] ? '1' : fmtRatio(ratioStat(f.map((x, i) => x[key] / ref[i]![key])))
        return [
          label(side),
          fmtSpread(spread(f.map((x) => x.wallMs)), 1),
          fmtSpread(spread(f.map((x) => x.cpuMs)), 1),
          fmtSpread(spread(f.map((x) => x.sinceStartMs)), 1),
          ratio('wallMs'),
          ratio('cpuMs'),
          ratio('sinceStartMs'),
        ]
      }),
    ),
  )
  out()
  out(
    'Per side: median (min–max) over rounds of the mean of its two processes. Ratios: geometric mean of the per-round ratios [95 % CI] (± half-width: the smallest change this run can see).',
  )
}

const run = promisify(execFile)

/** Instructions of the section (import + construct) of one process under callgrind. */
async function instructionsOf(side: string): Promise<number> {
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-import-'))
  try {
    await run(
      'setarch',
      [
        '-R',
        'valgrind',
        '--tool=callgrind',
        '--dump-before=uv_get_free_memory',
        `--callgrind-out-file=${join(dir, 'callgrind.out')}`,
        `--log-file=${join(dir, 'valgrind.log')}`,
        process.execPath,
        // V8's predictable mode: one thread, and nothing left to timers or to other threads'
        // timing (with --single-threaded alone, one build's count moved by 4 % between processes;
        // with this, by 0.003 %).
        '--predictable',
        '--hash-seed=1',
        '--random-seed=1',
        child,
        side,
      ],
      { env, maxBuffer: 64 * 1024 * 1024, timeout: 30 * 60_000 },
    )
    // callgrind.out.1: start-up to the first mark; .2: the section; .3 (at exit): the rest.
    const text = readFileSync(join(dir, 'callgrind.out.2'), 'utf8')
    const match = /^(?:summary|totals): (\d+)/m.exec(text)
    if (match === null) throw new Error(`no totals in ${dir}/callgrind.out.2`)
    return Number(match[1])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function instructions(repeats: number): Promise<void> {
  const load0 = load()
  const counts = new Map<string, number[]>(sides.map((s) => [s, []]))
  for (let r = 0; r < repeats; r++) {
    for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
      counts.get(side)!.push(await instructionsOf(side))
      log(`${label(side)}: ${counts.get(side)!.at(-1)!.toLocaleString('en-US')}`)
    }
  }
  const ref = median(counts.get(sides[0]!)!)
  out(`## Import and construct: instructions (callgrind, ${repeats} processes per side, load ${load0} → ${load()})`)
  out()
  out(
    table(
      ['side', 'instructions, median (min–max)', `/ ${label(sides[0]!)}`],
      sides.map((side) => {
        const s = spread(counts.get(side)!)
        return [label(side), `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`, `${(s.median / ref).toFixed(3)}×`]
      }),
    ),
  )
}

const fmt = (n: number): string => `${(n / 1e6).toFixed(2)}M`

if (values.instructions !== undefined) await instructions(Number(values.instructions))
else await timing(Number(values.rounds))
