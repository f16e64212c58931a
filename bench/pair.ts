// One paired per-call comparison (bench/paired.ts), on its own: B against A, each in its own
// process, ABBA half-blocks, ratios with 95 % confidence intervals. Also how the method itself is
// checked: an A/A run (`--a sdk --b sdk`) and a planted slowdown (`--b-plant 0.02`).
//   npm run bench:pair -- --a floor --b sdk                        the goal pair
//   npm run bench:pair -- --a sdk-at:.bench-out/baseline-0b1e0b1 --b sdk      today against 0.2.0
//   npm run bench:pair -- --a sdk --b sdk --rounds 30              A/A: what "no change" looks like
//   npm run bench:pair -- --a sdk --b sdk --b-plant 0.02           a planted 2 % slowdown
// Options: --rounds N (30), --sequential N (1000 calls a round, two half-blocks), --concurrent N
// (4000), --concurrency N (32), --warm-up N (1000), --page agents|messages, --a-plant F, --out FILE.
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { spawnFake } from './fake.ts'
import { fmtRatio, fmtSpread, table } from './lib.ts'
import { pairedRun, type PairedConfig, type PairedFigures } from './paired.ts'

const { values } = parseArgs({
  options: {
    a: { type: 'string', default: 'floor' },
    b: { type: 'string', default: 'sdk' },
    'a-plant': { type: 'string' },
    'b-plant': { type: 'string' },
    rounds: { type: 'string', default: '30' },
    sequential: { type: 'string', default: '1000' },
    concurrent: { type: 'string', default: '4000' },
    concurrency: { type: 'string', default: '32' },
    'warm-up': { type: 'string', default: '1000' },
    page: { type: 'string', default: 'agents' },
    out: { type: 'string' },
  },
})
const config: PairedConfig = {
  rounds: Number(values.rounds),
  sequential: Number(values.sequential),
  concurrent: Number(values.concurrent),
  concurrency: Number(values.concurrency),
  warmUp: Number(values['warm-up']),
}
const plant = (v: string | undefined): number | undefined => (v === undefined ? undefined : Number(v))
const load = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')
const log = (line: string): void => void process.stderr.write(`${line}\n`)

const startLoad = load()
const server = await spawnFake(['--agents', '20', '--customer-users', '100', '--conversations', '1', '--messages', '200'])
let figures: PairedFigures[]
const started = performance.now()
try {
  const a = { contender: values.a, plant: plant(values['a-plant']) }
  const b = { contender: values.b, plant: plant(values['b-plant']), ...(values.a === values.b ? { label: `${values.b} (B)` } : {}) }
  log(
    `pair: ${values.b} against ${values.a}, ${config.rounds} rounds × (${config.sequential} sequential + ${config.concurrent} at ${config.concurrency}), load ${startLoad}`,
  )
  figures = await pairedRun(server, [a, b], config, log, values.page)
} finally {
  await server.stop()
}
const seconds = (performance.now() - started) / 1000
const [ref, mine] = figures as [PairedFigures, PairedFigures]
const c = config.concurrency
console.log(`# ${mine.name} against ${ref.name}: ${values.page} page`)
console.log()
console.log(
  `Node ${process.version}, ${os.availableParallelism()} cores; load average ${startLoad} at start, ${load()} at end; ${seconds.toFixed(0)} s`,
)
console.log(
  `${config.rounds} rounds; per round ${config.sequential} sequential calls and ${config.concurrent} at ${c} in flight per side, in ABBA half-blocks, each side in its own process. Median (min–max) over rounds.`,
)
console.log()
console.log(
  table(
    [
      'contender',
      'seq wall µs/call',
      'seq p50 µs',
      'seq CPU µs/call',
      `@${c} wall µs/call`,
      `@${c} req/s`,
      `@${c} CPU µs/call`,
      'new conns / 100',
    ],
    figures.map((f) => [
      f.name,
      fmtSpread(f.seq.wallUs, 1),
      fmtSpread(f.seq.p50, 1),
      fmtSpread(f.seq.cpuUs, 1),
      fmtSpread(f.con.wallUs, 1),
      fmtSpread(f.con.rps, 0),
      fmtSpread(f.con.cpuUs, 1),
      String(f.connectionsPer100),
    ]),
  ),
)
console.log()
console.log('Ratios B / A per round: geometric mean [95 % confidence interval] (± half-width); req/s is A-time / B-time.')
console.log()
const v = mine.vs!
console.log(
  table(
    ['ratio', 'sequential', `${c} in flight`],
    [
      ['wall time per call', fmtRatio(v.seq.wall), fmtRatio(v.con.wall)],
      ['client CPU per call', fmtRatio(v.seq.cpu), fmtRatio(v.con.cpu)],
      ['p50 latency', fmtRatio(v.seq.p50), fmtRatio(v.con.p50)],
      ['req/s', fmtRatio(v.seq.rps), fmtRatio(v.con.rps)],
      ['extra CPU µs/call, median (min–max)', fmtSpread(v.seq.extraCpuUs, 2), fmtSpread(v.con.extraCpuUs, 2)],
    ],
  ),
)
const file =
  values.out ??
  new URL(
    `./results/pair-${values.b.replace(/[^a-z0-9-]/gi, '')}-vs-${values.a.replace(/[^a-z0-9-]/gi, '')}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
    import.meta.url,
  ).pathname
mkdirSync(new URL('./results/', import.meta.url).pathname, { recursive: true })
writeFileSync(file, `${JSON.stringify({ config, values, startLoad, endLoad: load(), seconds, figures }, null, 2)}\n`)
log(`results written to ${file}`)
