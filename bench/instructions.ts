// Instructions per call (issue 32): what one warm call costs in CPU instructions, counted by
// valgrind, which a busy machine does not change (wall and CPU time move by tens of percent when
// other work shares the cores; an instruction count moves by a fraction of a percent: see
// BENCHMARKS.md, "Instructions per call").
//
// Method. Each contender runs alone in a client process (bench/instructions-client.ts) under
// `valgrind --tool=callgrind` (it counts every instruction the process executes, JIT-compiled code
// included), against the fake service in another process that valgrind does not watch (through a
// proxy that keeps connections open: see bench/proxy.ts). The client is made as repeatable as a JIT
// allows: `setarch -R` (no address-space randomisation), V8's `--single-threaded` (no concurrent
// compiler or GC threads whose timing would differ), fixed `--hash-seed` and `--random-seed`, no
// memory reducer, and JIT tier-up thresholds lowered so that the hot path is compiled by Turbofan
// within ~2,500 calls (by default V8 defers Turbofan to 15,000 invocations). After a warm-up of W
// calls it runs K segments of N calls back to back; callgrind writes its counters at each segment's
// boundary (`--dump-before=uv_get_free_memory`, which the client calls to mark them), so start-up,
// module loading and the warm-up stay out. Each segment's counts are read with
// `callgrind_annotate`: all instructions, those under `Compiler::CompileOptimized` (Maglev and
// Turbofan compiling a function: one-off work that still lands, late, in some segments and made
// their totals differ by up to 3×), and those under `Heap::CollectGarbage`. The figure is
// instructions per call with JIT compiling and GC left out, median over segments; GC is shown
// beside it. GC is part of what a call costs, but where the scavenges fall against the segments'
// boundaries differs from process to process: measured on one build, GC per call was 3k in one
// process and 17k in the next, while the rest stayed within 0.1 %. No GC is forced (see
// instructions-client.ts); allocation per call is the allocation benchmark's to show.
//
//   npm run bench:instructions                                          floor and SDK, sequential and 32 in flight
//   npm run bench:instructions -- --contenders floor,sdk,sdk-at:.bench-out/baseline-0b1e0b1
//   npm run bench:instructions -- --contenders sdk,sdk+spins=3000 --modes 1   a planted slowdown
//   npm run bench:instructions -- --contenders floor,sdk --modes 1 --keep DIR --perf-map
//   node bench/instructions-attribute.ts --a DIR/floor-1-*/callgrind.out.3 --b DIR/sdk-1-*/callgrind.out.3
//                                          where the SDK's instructions go that the floor's do not
// Options: --contenders (comma list; the first is the reference; `X+spins=K` adds K iterations of
// a busy loop per call), --modes (concurrencies, default 1,32), --warm-up W (3000), --calls N
// (500), --segments K (6), --repeats R (processes per contender and mode, 1), --page
// agents|messages, --jobs J (valgrind processes at once, default 1), --out FILE, --keep DIR (the
// callgrind files), --perf-map (with --keep: V8's map of JIT code, to name it), --trace.
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { spawnFake } from './fake.ts'
import { startProxy } from './proxy.ts'
import { spread, table, type Spread } from './lib.ts'

const run = promisify(execFile)

const { values } = parseArgs({
  options: {
    contenders: { type: 'string', default: 'floor,sdk' },
    modes: { type: 'string', default: '1,32' },
    'warm-up': { type: 'string', default: '3000' },
    calls: { type: 'string', default: '500' },
    segments: { type: 'string', default: '6' },
    repeats: { type: 'string', default: '1' },
    page: { type: 'string', default: 'agents' },
    jobs: { type: 'string', default: '1' },
    out: { type: 'string' },
    // Keep each run's callgrind files (callgrind_annotate reads them) and, with --trace, V8's
    // --trace-opt/--trace-deopt/--trace-gc output, in this directory.
    keep: { type: 'string' },
    trace: { type: 'boolean', default: false },
    // With --keep: V8 writes its map of JIT-compiled functions (--perf-basic-prof) beside each
    // run's callgrind files (perf.map), so that the `0x…` functions callgrind cannot name can be
    // named (bench/instructions-attribute.ts).
    'perf-map': { type: 'boolean', default: false },
  },
})
const contenders = values.contenders.split(',').filter((c) => c !== '')
const modes = values.modes.split(',').map(Number)
const warmUp = Number(values['warm-up'])
const calls = Number(values.calls)
const segments = Number(values.segments)
const repeats = Number(values.repeats)
const jobs = Math.max(1, Number(values.jobs))
const log = (line: string): void => void process.stderr.write(`${line}\n`)

/** V8 and Node flags of the counted client: repeatable, one thread. */
export const COUNTED_FLAGS = [
  '--single-threaded',
  '--hash-seed=1',
  '--random-seed=1',
  '--no-memory-reducer',
  // The JIT reaches its steady state (hot code compiled by Turbofan) within ~2,500 calls instead of
  // ~15,000: by default V8 tiers up to Turbofan only after 15,000 invocations in its "efficiency
  // mode", and compiling is work that lands in whichever segment it happens in.
  '--no-efficiency-mode',
  '--invocation-count-for-maglev=100',
  '--invocation-count-for-turbofan=500',
  '--minimum-invocations-after-ic-update=100',
]

const fake = await spawnFake(['--agents', '20', '--customer-users', '100', '--conversations', '1', '--messages', '200'])
// The slowed-down client talks to the fake through a proxy that keeps idle connections for 10
// minutes (see bench/proxy.ts): the fake's 5 s would close them under a client 50 times slower.
const proxy = await startProxy(fake.url, { keepAliveTimeoutMs: 600_000 })
const server = { ...fake, url: proxy.url }
const scratch = mkdtempSync(join(os.tmpdir(), 'bench-instructions-'))
if (values.keep !== undefined) mkdirSync(values.keep, { recursive: true })

/** What one segment executed: every instruction, those of V8's optimising compilers, those of its GC. */
interface Segment {
  total: number
  jit: number
  gc: number
}

/**
 * The counts of one callgrind dump. `jit` is the inclusive count of
 * `v8::internal::Compiler::CompileOptimized` (Maglev and Turbofan compiling a function, which a
 * steady state no longer does; a function can still be compiled late, in any segment); `gc` that
 * of `v8::internal::Heap::CollectGarbage` (scavenges and full GCs: part of a call's cost).
 */
async function segmentCounts(file: string): Promise<Segment> {
  const { stdout } = await run('callgrind_annotate', ['--threshold=100', '--inclusive=yes', file], { maxBuffer: 256 * 1024 * 1024 })
  const inclusive = (pattern: RegExp): number => {
    let most = 0
    for (const line of stdout.split('\n')) {
      const match = /^\s*([\d,]+)\s/.exec(line)
      if (match !== null && pattern.test(line)) most = Math.max(most, Number(match[1]!.replaceAll(',', '')))
    }
    return most
  }
  const total = inclusive(/PROGRAM TOTALS/)
  if (total === 0) throw new Error(`no PROGRAM TOTALS in ${file}`)
  return { total, jit: inclusive(/v8::internal::Compiler::CompileOptimized\(/), gc: inclusive(/v8::internal::Heap::CollectGarbage\(/) }
}

/** Instructions of each segment of `calls` calls in one client process (see the header). */
async function count(contender: string, concurrency: number): Promise<Segment[]> {
  const [name, plant] = contender.split('+spins=')
  const dir = mkdtempSync(join(values.keep ?? scratch, `${contender.replace(/[^a-z0-9-]/gi, '')}-${concurrency}-`))
  try {
    const result = await run(
      'setarch',
      [
        '-R',
        'valgrind',
        '--tool=callgrind',
        '--dump-before=uv_get_free_memory',
        `--callgrind-out-file=${join(dir, 'callgrind.out')}`,
        `--log-file=${join(dir, 'valgrind.log')}`,
        process.execPath,
        ...COUNTED_FLAGS,
        ...(values['perf-map'] ? ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`] : []),
        ...(values.trace
          ? ['--trace-opt', '--trace-deopt', '--trace-gc', '--import', new URL('./instructions-mark.ts', import.meta.url).pathname]
          : []),
        new URL('./instructions-client.ts', import.meta.url).pathname,
        '--contender',
        name!,
        '--server',
        JSON.stringify(server),
        '--page',
        values.page,
        '--warm-up',
        String(warmUp),
        '--calls',
        String(calls),
        '--segments',
        String(segments),
        '--concurrency',
        String(concurrency),
        '--plant-spins',
        plant ?? '0',
      ],
      { maxBuffer: 256 * 1024 * 1024, timeout: 60 * 60_000 },
    )
    if (values.keep !== undefined) writeFileSync(join(dir, 'stdout.txt'), result.stdout)
    if (values['perf-map']) {
      // valgrind runs node in its own process: the pid in its log names V8's map file.
      const pid = /^==(\d+)==/m.exec(readFileSync(join(dir, 'valgrind.log'), 'utf8'))?.[1]
      if (pid !== undefined) {
        copyFileSync(`/tmp/perf-${pid}.map`, join(dir, 'perf.map'))
        rmSync(`/tmp/perf-${pid}.map`, { force: true })
      }
    }
    // callgrind.out.1 runs to the first mark (start-up, warm-up, a GC); then one file per segment.
    const dumps = readdirSync(dir)
      .map((file) => /^callgrind\.out\.(\d+)$/.exec(file))
      .filter((m) => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b)
    if (dumps.length !== segments + 1) {
      throw new Error(`expected ${segments + 1} callgrind dumps, found ${dumps.length}: something else called uv_get_free_memory`)
    }
    return await Promise.all(dumps.filter((n) => n > 1).map((n) => segmentCounts(join(dir, `callgrind.out.${n}`))))
  } finally {
    if (values.keep === undefined) rmSync(dir, { recursive: true, force: true })
  }
}

interface Row {
  contender: string
  concurrency: number
  /** Per segment (all repeats): instructions per call, all of them and without JIT compiling; GC's share. */
  total: number[]
  steady: number[]
  gc: number[]
  /** Without JIT compiling and without GC: the figure that repeats from process to process (see the header). */
  own: number[]
}

const rows: Row[] = contenders.flatMap((contender) =>
  modes.map((concurrency) => ({
    contender,
    concurrency,
    total: [] as number[],
    steady: [] as number[],
    gc: [] as number[],
    own: [] as number[],
  })),
)
const started = performance.now()
const startLoad = os.loadavg()[0]!.toFixed(2)
const k = (n: number): string => `${(n / 1000).toFixed(1)}k`
log(
  `instructions: ${contenders.join(', ')}; concurrency ${modes.join(', ')}; warm-up ${warmUp}, then ${segments} segments of ${calls} calls; ${repeats} process(es) each; ${jobs} at once`,
)
try {
  // Every (row, repeat) is one client process; interleaved across contenders.
  const tasks: (() => Promise<void>)[] = []
  for (let r = 0; r < repeats; r++) {
    for (const row of rows) {
      tasks.push(async () => {
        const t0 = performance.now()
        const counted = await count(row.contender, row.concurrency)
        row.total.push(...counted.map((c) => c.total / calls))
        row.steady.push(...counted.map((c) => (c.total - c.jit) / calls))
        row.gc.push(...counted.map((c) => c.gc / calls))
        row.own.push(...counted.map((c) => (c.total - c.jit - c.gc) / calls))
        log(
          `  ${row.contender} @${row.concurrency} repeat ${r + 1}: per call, by segment: ${counted.map((c) => `${k((c.total - c.jit) / calls)} (+${k(c.jit / calls)} JIT)`).join(', ')} (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
        )
      })
    }
  }
  let next = 0
  await Promise.all(
    Array.from({ length: jobs }, async () => {
      while (next < tasks.length) await tasks[next++]!()
    }),
  )
} finally {
  await proxy.close()
  await fake.stop()
  rmSync(scratch, { recursive: true, force: true })
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US')
const fmt = (s: Spread): string => (s.values.length <= 1 ? int(s.median) : `${int(s.median)} (${int(s.min)}–${int(s.max)})`)
/** Relative standard deviation of the values, %. */
const rsd = (values: readonly number[]): number => {
  const mean = values.reduce((a, b) => a + b, 0) / values.length
  return (Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, values.length - 1)) / mean) * 100
}
const reference = new Map(rows.filter((r) => r.contender === contenders[0]).map((r) => [r.concurrency, spread(r.own)]))
console.log(
  `# Instructions per call: ${values.page} page (callgrind; ${segments} segments of ${calls} calls after ${warmUp} warm-up calls, ${repeats} process(es))`,
)
console.log()
console.log(
  `Node ${process.version}; ${COUNTED_FLAGS.join(' ')}; setarch -R; load average ${startLoad} at start (it does not change the counts); ${((performance.now() - started) / 1000).toFixed(0)} s`,
)
console.log()
console.log(
  table(
    [
      'contender',
      'in flight',
      'instructions / call, JIT compiling and GC left out: median (min–max) over segments',
      'sd over segments',
      `/ ${contenders[0]}`,
      'GC / call: median (min–max)',
      'all instructions / call (JIT and GC included)',
    ],
    rows.map((r) => {
      const s = spread(r.own)
      const ref = reference.get(r.concurrency)!
      return [
        r.contender,
        String(r.concurrency),
        fmt(s),
        `${rsd(r.own).toFixed(2)} %`,
        `${(s.median / ref.median).toFixed(4)}×`,
        fmt(spread(r.gc)),
        fmt(spread(r.total)),
      ]
    }),
  ),
)
const file =
  values.out ?? new URL(`./results/instructions-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url).pathname
mkdirSync(new URL('./results/', import.meta.url).pathname, { recursive: true })
writeFileSync(
  file,
  `${JSON.stringify({ contenders, modes, warmUp, calls, segments, repeats, page: values.page, flags: COUNTED_FLAGS, rows }, null, 2)}\n`,
)
log(`results written to ${file}`)
