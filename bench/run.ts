// The benchmark suite (see BENCHMARKS.md): per-call cost against the fair floor (issue 9), the
// suite of issue 5, then the export benchmark of issue 10 (bench/export/run.ts, run as a child
// process). Every comparison runs side by side in one run, against servers in separate processes,
// interleaving the contenders over rounds; it prints medians with the min–max over rounds, and
// ratios taken per round. It reports; it never fails on a figure (it exits non-zero only when a
// benchmark cannot run or a contender answers wrongly). Clients import the BUILT package.
//   npm run bench                 everything (~8 min on a quiet 2-core machine)
//   npm run bench:quick           per request, allocation, a short prefetch run and a small export: < 1 min
//   npm run bench -- --only request,alloc,schema,iterate,memory,loopback,link,nightly   a subset
//   npm run bench -- --only request --baseline DIR   also today's SDK against an earlier one (bench/baseline.ts)
import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { allocation, type AllocConfig, type AllocResult } from './alloc.ts'
import { agentsPage, AXIOS, FLOOR, OLD_FLOOR, SDK, STRICT_FLOOR, tryFetchGetBody, verifyAxiosSendsGetBody } from './contenders.ts'
import { spawnFake, type SpawnedFake } from './fake.ts'
import { iteration, type IterationConfig, type IterationFigures } from './iteration.ts'
import { fmtRatio, fmtSpread, machineInfo, MB, ratioStat, spread, table, type RatioStat, type Spread } from './lib.ts'
import { memory, type MemoryConfig, type MemoryFigures } from './memory.ts'
import type { PairedFigures } from './paired.ts'
import { perRequest, perRequestBaseline, type PerRequestConfig } from './per-request.ts'
import { verifyFloorWire } from './wire-check.ts'
import { schemaCost, type SchemaConfig, type SchemaFigures } from './schema.ts'

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
    // A directory built by bench/baseline.ts: that version of the SDK against today's, per request.
    baseline: { type: 'string' },
  },
})
const quick = values.quick
const sections = new Set(
  (values.only ?? (quick ? 'request,alloc,iterate,loopback,nightly' : 'request,alloc,schema,iterate,memory,loopback,link,nightly')).split(
    ',',
  ),
)
if (values.baseline !== undefined && !sections.has('request')) {
  process.stderr.write('--baseline compares per request: add request to --only (e.g. --only request --baseline DIR)\n')
  process.exit(2)
}
/** Sections of the export benchmark (bench/export/run.ts). */
const exportSections = ['loopback', 'link', 'nightly'].filter((s) => sections.has(s))
const LATENCY_MS = 5
/**
 * Goals against the floor: issue 32's (sequential wall time per call ≤ 1.00×, requests per second
 * at 32 in flight ≥ 1.05×, bytes per 100-message page ≤ 1.1×); issue 9's and 22's, which they
 * tighten, are kept in the table.
 */
const GOAL = { seq: 1.0, rpsAt32: 1.05, seq9: 1.1, rpsAt32_9: 0.95, alloc: 1.5, alloc22: 1.2, alloc32: 1.1 }

const perRequestConfig: PerRequestConfig = quick
  ? { rounds: 8, sequential: 300, concurrent: 1_600, concurrency: 32, warmUp: 500, withOldFloor: false }
  : { rounds: 30, sequential: 600, concurrent: 2_000, concurrency: 32, warmUp: 1_000, withOldFloor: true }
const allocConfig: AllocConfig = quick
  ? { rounds: 5, batch: 100, warmUp: 300, budgetMs: 60_000 }
  : { rounds: 9, batch: 200, warmUp: 1_000, budgetMs: 120_000 }
const iterationConfig: IterationConfig = quick
  ? { rounds: 3, messages: 10_000, limit: 100, prefetch: [0, 4], runBudgetMs: 10_000 }
  : { rounds: 5, messages: 100_000, limit: 100, prefetch: [0, 1, 2, 4, 8], runBudgetMs: 60_000 }
const memoryConfig: MemoryConfig = { rounds: 3, messages: 1_000_000, prefetch: [0, 8], runBudgetMs: 120_000 }
const schemaConfig: SchemaConfig = { rounds: 5, ops: 1_000, requests: 300, batchBudgetMs: 3_000 }

const log = (line: string): void => void process.stderr.write(`${line}\n`)
const out = (line = ''): void => void process.stdout.write(`${line}\n`)
const x = (s: Spread | undefined, d = 2): string => (s === undefined ? '–' : `${fmtSpread(s, d)}×`)
const ratioOf = (a: Spread, b: Spread): Spread => spread(a.values.map((v, i) => v / b.values[i]!))
/** Per-round ratio of two contenders' figures as a {@link RatioStat}. */
const ratioStatOf = (a: Spread, b: Spread): RatioStat => ratioStat(a.values.map((v, i) => v / b.values[i]!))

/** Per contender: wall time, latency and CPU per call in both modes, connections. */
function contenderTable(figures: readonly PairedFigures[], concurrency: number): string {
  return table(
    [
      'contender',
      'seq wall µs/call',
      'seq p50 µs',
      'seq p99 µs',
      'seq CPU µs/call',
      `@${concurrency} req/s`,
      `@${concurrency} p50 µs`,
      `@${concurrency} p99 µs`,
      `@${concurrency} CPU µs/call`,
      'new conns / 100 calls',
    ],
    figures.map((f) => [
      f.name,
      fmtSpread(f.seq.wallUs, 0),
      fmtSpread(f.seq.p50, 0),
      fmtSpread(f.seq.p99, 0),
      fmtSpread(f.seq.cpuUs, 1),
      fmtSpread(f.con.rps, 0),
      fmtSpread(f.con.p50, 0),
      fmtSpread(f.con.p99, 0),
      fmtSpread(f.con.cpuUs, 1),
      String(f.connectionsPer100),
    ]),
  )
}

/** Per contender against the reference: the ratios with their confidence intervals. */
function ratioTable(figures: readonly PairedFigures[], concurrency: number, reference: string): string {
  return table(
    [
      `/ ${reference}`,
      'seq wall per call',
      'seq p50',
      'seq CPU per call',
      `@${concurrency} req/s`,
      `@${concurrency} CPU per call`,
      `extra CPU µs/call seq; @${concurrency}`,
    ],
    figures.map((f) => [
      f.name,
      fmtRatio(f.vs!.seq.wall),
      fmtRatio(f.vs!.seq.p50),
      fmtRatio(f.vs!.seq.cpu),
      fmtRatio(f.vs!.con.rps),
      fmtRatio(f.vs!.con.cpu),
      `${fmtSpread(f.vs!.seq.extraCpuUs, 1)}; ${fmtSpread(f.vs!.con.extraCpuUs, 1)}`,
    ]),
  )
}

/** A goal's verdict on a ratio with its interval: met or missed on the mean, and whether the interval is clear of the threshold. */
function ratioVerdict(r: RatioStat, threshold: number, atMost: boolean): string {
  const met = atMost ? r.mean <= threshold : r.mean >= threshold
  const clear = atMost ? (met ? r.hi <= threshold : r.lo > threshold) : met ? r.lo >= threshold : r.hi < threshold
  return `${verdict(met)}${clear ? '' : ' (the interval straddles the goal)'}`
}
const verdict = (met: boolean): string => (met ? 'met' : 'MISSED')
const loadavg = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')

async function withServer<T>(args: string[], fn: (server: SpawnedFake) => Promise<T>): Promise<T> {
  const server = await spawnFake(args)
  try {
    return await fn(server)
  } finally {
    await server.stop()
  }
}

const suiteStarted = performance.now()
const machine = machineInfo()
out(`# chat-service-sdk benchmarks (${quick ? 'quick' : 'full'})`)
out()
out(
  `Node ${machine.node}, os.availableParallelism() = ${machine.parallelism}, ${machine.cpu}, ${machine.platform}, ${machine.memoryGiB} GiB RAM`,
)
out(`Load average at start (1/5/15 min): ${loadavg()} (anything well above 0 means other work shares the ${machine.parallelism} cores)`)
out(
  `Clients import the built package (dist/); the fake service runs in a separate process on 127.0.0.1 and shares the cores; gc between blocks: ${typeof (globalThis as { gc?: unknown }).gc === 'function' ? 'yes' : 'no'}`,
)

const results: {
  machine: typeof machine
  quick: boolean
  notes: string[]
  perRequest?: PairedFigures[]
  /** Today's SDK against `--baseline` (reference first). */
  baseline?: PairedFigures[]
  alloc?: AllocResult
  iteration?: IterationFigures[]
  memory?: MemoryFigures[]
  schema?: SchemaFigures[]
  wallSeconds?: number
} = { machine, quick, notes: [] }

if (sections.has('request') || sections.has('schema') || sections.has('alloc')) {
  await withServer(['--agents', '20', '--customer-users', '100', '--conversations', '1', '--messages', '200'], async (server) => {
    if (sections.has('request')) {
      const notes = [await verifyAxiosSendsGetBody(), await tryFetchGetBody(server), await verifyFloorWire(server, agentsPage())]
      results.notes.push(...notes)
      out()
      for (const note of notes) out(`Note: ${note}`)
      const c = perRequestConfig
      log(
        `per-request: ${c.rounds} rounds × (${c.sequential} sequential + ${c.concurrent} at ${c.concurrency} in flight) per contender, ${c.warmUp} warm-up calls each, each contender in its own process`,
      )
      const figures = await perRequest(server, c, log)
      results.perRequest = figures
      out()
      out(`## Per request: GET ${agentsPage().path} (one page of 20 agents)`)
      out(
        `${c.rounds} rounds; per round ${c.sequential} sequential calls per contender, then ${c.concurrent} calls with ${c.concurrency} in flight; every contender in its own process. ` +
          `The floor (raw undici with the SDK's pool settings, bench/floor.ts) and the SDK run in ABBA half-blocks (the order flips each round); the others follow, rotated. Median over rounds (min–max).`,
      )
      out()
      out(contenderTable(figures, c.concurrency))
      out()
      out(ratioTable(figures.slice(1), c.concurrency, FLOOR))
      out(
        'Ratios are contender / floor per round (blocks adjacent in time): geometric mean [95 % confidence interval] over rounds (± its half-width: a smaller change than that cannot be told from noise in this run). req/s is the inverse of wall time per call.',
      )
      if (figures.some((f) => f.name === OLD_FLOOR))
        out(
          `"${OLD_FLOOR}" is issue 5's floor, kept as a labelled control: it reconnects on every call, so the SDK looks faster than it is.`,
        )

      if (values.baseline !== undefined) {
        log(`per-request, ${SDK} against ${values.baseline}: ${c.rounds} rounds, ABBA, each in its own process`)
        const versus = await perRequestBaseline(server, values.baseline, c, log)
        results.baseline = versus
        out()
        out(`## Per request: today's SDK against ${versus[0]!.name} (the same page, undici and zod)`)
        out(
          `${c.rounds} rounds of the same blocks, the two in ABBA half-blocks, each in its own process. Ratios are today's / ${versus[0]!.name}.`,
        )
        out()
        out(contenderTable(versus, c.concurrency))
        out()
        out(ratioTable(versus.slice(1), c.concurrency, versus[0]!.name))
      }
    }

    if (sections.has('alloc')) {
      log(`allocation: ${allocConfig.rounds} rounds × batches of ${allocConfig.batch} calls, in a child process`)
      const a = await allocation(server, allocConfig)
      results.alloc = a
      out()
      out(`## Allocation: bytes allocated per call, one page of 100 messages (${a.pageBytes.toLocaleString('en-US')} bytes of JSON)`)
      out(
        `A child process with 128 MB semi-spaces, so no GC runs inside a batch (--min/--max-semi-space-size=128); per batch of ${a.batch} sequential calls: growth of V8's used heap + growth of ArrayBuffer memory, divided by the calls. ` +
          `Batches during which a GC ran were discarded (${a.discarded} here). ${allocConfig.rounds} rounds, contenders rotated; median (min–max).`,
      )
      out()
      out(
        table(
          ['contender', 'V8 heap bytes/call', 'ArrayBuffer bytes/call', 'total bytes/call', 'total / floor', 'heap / floor'],
          a.figures.map((f) => [
            f.name,
            fmtSpread(f.heap, 0),
            fmtSpread(f.external, 0),
            fmtSpread(f.total, 0),
            x(f.vsFloor),
            x(f.heapVsFloor),
          ]),
        ),
      )
    }

    if (sections.has('schema')) {
      log('schema cost ...')
      const figures = await schemaCost(server, schemaConfig, log)
      results.schema = figures
      out()
      out('## Schema cost: validating one page with the SDK schemas')
      out(
        `${schemaConfig.rounds} rounds of ${schemaConfig.ops} operations (mean per operation), and ${schemaConfig.requests} sequential requests for the same page. Median over rounds (min–max).`,
      )
      out()
      out(
        table(
          [
            'page',
            'bytes',
            'JSON.parse µs',
            'validate µs',
            'build schema + validate µs',
            'SDK request p50 µs',
            'floor p50 µs',
            'validate / SDK request',
          ],
          figures.map((f) => [
            f.page,
            String(f.bytes),
            fmtSpread(f.jsonParseUs, 1),
            fmtSpread(f.validateUs, 1),
            fmtSpread(f.buildAndValidateUs, 1),
            fmtSpread(f.sdkRequestP50Us, 0),
            fmtSpread(f.rawRequestP50Us, 0),
            `${fmtSpread({ ...f.share, median: f.share.median * 100, min: f.share.min * 100, max: f.share.max * 100 }, 1)} %`,
          ]),
        ),
      )
    }
  })
}

if (sections.has('iterate')) {
  const c = iterationConfig
  await withServer(['--conversations', '1', '--messages', String(c.messages), '--latency-ms', String(LATENCY_MS)], async (server) => {
    const pages = Math.ceil(c.messages / c.limit)
    log(
      `iteration: ${c.rounds} rounds × prefetch [${c.prefetch.join(', ')}], ${c.messages} messages (${pages} pages) at ${LATENCY_MS} ms per page`,
    )
    const figures = await iteration(server, c, log)
    results.iteration = figures
    out()
    out(
      `## Full iteration: ${c.messages.toLocaleString('en-US')} messages at limit ${c.limit} (${pages} pages), server latency ${LATENCY_MS} ms per page`,
    )
    out(
      `${c.rounds} rounds, settings interleaved; items iterated one by one with for await. Sequential floor: ${pages} × ${LATENCY_MS} ms = ${((pages * LATENCY_MS) / 1000).toFixed(1)} s. Median over rounds (min–max).`,
    )
    out()
    out(
      table(
        ['prefetch', 'wall s', 'pages/s', 'speed-up vs sequential'],
        figures.map((f) => [
          f.label === '0' ? '0 (sequential)' : f.label,
          fmtSpread({ ...f.wallMs, median: f.wallMs.median / 1000, min: f.wallMs.min / 1000, max: f.wallMs.max / 1000 }, 2),
          fmtSpread(f.pagesPerSec, 0),
          x(f.speedup),
        ]),
      ),
    )
  })
}

if (sections.has('memory')) {
  const c = memoryConfig
  await withServer(['--conversations', '1', '--messages', String(c.messages)], async (server) => {
    log(
      `memory: ${c.rounds} rounds × (baseline + floor + prefetch [${c.prefetch.join(', ')}]), ${c.messages} messages, each client in its own process`,
    )
    const figures = await memory(server, c, log)
    results.memory = figures
    const mb = (s: Spread): string => fmtSpread({ ...s, median: s.median / MB, min: s.min / MB, max: s.max / MB }, 1)
    out()
    out(`## Memory: iterating ${c.messages.toLocaleString('en-US')} messages (limit 100) in a client child process`)
    out(
      `${c.rounds} rounds, runs interleaved; a fresh client process per run (started with --expose-gc, used only after the loop); peak RSS = the client's process.resourceUsage().maxRSS. Median over rounds (min–max).`,
    )
    out()
    out(
      table(
        [
          'client process',
          'peak RSS MB',
          'RSS at start MB',
          'RSS after 100k msgs MB',
          'heapTotal at RSS peak MB',
          'peak heap used MB',
          'heap used after final gc MB',
          'wall s',
        ],
        figures.map((f) => [
          f.label,
          mb(f.maxRss),
          mb(f.rssAtStart),
          f.rssAt100k.median > 0 ? mb(f.rssAt100k) : '–',
          mb(f.heapTotalAtPeak),
          mb(f.peakHeapUsed),
          mb(f.heapUsedAfterGc),
          fmtSpread({ ...f.wallMs, median: f.wallMs.median / 1000, min: f.wallMs.min / 1000, max: f.wallMs.max / 1000 }, 1),
        ]),
      ),
    )
    out()
    out('RSS after every 100,000 messages, first round (MB):')
    for (const f of figures) {
      if (f.rssCurve.length > 0) out(`- ${f.label}: ${f.rssCurve.map((b) => (b / MB).toFixed(0)).join(', ')}`)
    }
  })
}

// Goals and the compact ratio block every CI log shows.
const goals: string[][] = []
const block: string[] = []
const floor = results.perRequest?.find((f) => f.name === FLOOR)
const mine = results.perRequest?.find((f) => f.name === SDK)
const ax = results.perRequest?.find((f) => f.name === AXIOS)
const old = results.perRequest?.find((f) => f.name === OLD_FLOOR)
const strict = results.perRequest?.find((f) => f.name === STRICT_FLOOR)
if (floor && mine) {
  const seq = mine.vs!.seq.wall
  const thr = mine.vs!.con.rps
  goals.push([`(32) SDK sequential wall time per call ≤ ${GOAL.seq}× the floor`, fmtRatio(seq), ratioVerdict(seq, GOAL.seq, true)])
  goals.push([`(32) SDK req/s at 32 in flight ≥ ${GOAL.rpsAt32}× the floor`, fmtRatio(thr), ratioVerdict(thr, GOAL.rpsAt32, false)])
  goals.push([
    `(9) SDK sequential p50 ≤ ${GOAL.seq9}× the floor`,
    fmtRatio(mine.vs!.seq.p50),
    ratioVerdict(mine.vs!.seq.p50, GOAL.seq9, true),
  ])
  goals.push([`(9) SDK req/s at 32 in flight ≥ ${GOAL.rpsAt32_9}× the floor`, fmtRatio(thr), ratioVerdict(thr, GOAL.rpsAt32_9, false)])
  block.push(`SDK/floor wall per call, seq     ${fmtRatio(seq)}  (goal ≤ ${GOAL.seq})`)
  block.push(`SDK/floor req/s at 32            ${fmtRatio(thr)}  (goal ≥ ${GOAL.rpsAt32})`)
  block.push(`SDK/floor CPU per call seq; @32  ${fmtRatio(mine.vs!.seq.cpu)}; ${fmtRatio(mine.vs!.con.cpu)}`)
  if (ax) {
    const vsAxSeq = ratioStatOf(mine.seq.wallUs, ax.seq.wallUs)
    const vsAxCon = ratioStatOf(mine.con.rps, ax.con.rps)
    goals.push([
      '(5) SDK faster than axios + zod (seq wall per call ratio < 1, req/s at 32 ratio > 1)',
      `seq ${fmtRatio(vsAxSeq, 2)}, req/s ${fmtRatio(vsAxCon, 2)}`,
      verdict(vsAxSeq.mean < 1 && vsAxCon.mean > 1),
    ])
    block.push(`SDK/axios+zod seq, req/s@32      ${fmtRatio(vsAxSeq, 2)}, ${fmtRatio(vsAxCon, 2)}`)
  }
  if (strict) {
    const s = `${fmtRatio(ratioStatOf(mine.seq.wallUs, strict.seq.wallUs), 2)}, ${fmtRatio(ratioStatOf(mine.con.rps, strict.con.rps), 2)}`
    goals.push([`(reference) SDK vs ${STRICT_FLOOR}: seq wall per call, req/s at 32`, s, 'reference'])
    block.push(`SDK/strict floor seq, req/s@32   ${s}`)
  }
  if (old) {
    goals.push([
      `(5, old floor — NOT fair, for the record) SDK vs ${OLD_FLOOR}: seq wall per call, req/s at 32`,
      `${x(ratioOf(mine.seq.wallUs, old.seq.wallUs))}, ${x(ratioOf(mine.con.rps, old.con.rps))}`,
      'control',
    ])
  }
}
const allocSdk = results.alloc?.figures.find((f) => f.name === SDK)
const allocStrict = results.alloc?.figures.find((f) => f.name === STRICT_FLOOR)
if (allocSdk && allocStrict) {
  goals.push([
    `(reference) SDK bytes per 100-message page vs ${STRICT_FLOOR}`,
    x(spread(allocSdk.total.values.map((v, i) => v / allocStrict.total.values[i]!))),
    'reference',
  ])
}
if (allocSdk) {
  goals.push([
    `(9) SDK bytes allocated per 100-message page ≤ ${GOAL.alloc}× the floor`,
    x(allocSdk.vsFloor),
    verdict(allocSdk.vsFloor.median <= GOAL.alloc),
  ])
  goals.push([
    `(22) SDK bytes allocated per 100-message page ≤ ${GOAL.alloc22}× the floor`,
    x(allocSdk.vsFloor),
    verdict(allocSdk.vsFloor.median <= GOAL.alloc22),
  ])
  goals.push([
    `(32) SDK bytes allocated per 100-message page ≤ ${GOAL.alloc32}× the floor`,
    x(allocSdk.vsFloor),
    verdict(allocSdk.vsFloor.median <= GOAL.alloc32),
  ])
  block.push(`SDK/floor bytes per 100-msg page ${x(allocSdk.vsFloor)}  (goal ≤ ${GOAL.alloc32}; ${fmtSpread(allocSdk.total, 0)} bytes)`)
}
const p4 = results.iteration?.find((f) => f.prefetch === 4)
if (p4) {
  goals.push([`(5) prefetch 4 ≥ 3× faster than sequential (${LATENCY_MS} ms server)`, x(p4.speedup), verdict(p4.speedup.median >= 3)])
  block.push(`prefetch 4 speed-up             ${x(p4.speedup)}  (goal ≥ 3)`)
}
for (const f of results.memory ?? []) {
  if (!f.goalRow || f.prefetch === undefined) continue
  goals.push([
    `(5) 1,000,000 messages, client peak RSS < 150 MB (prefetch ${f.prefetch})`,
    `${(f.maxRss.median / MB).toFixed(1)} MB (max ${(f.maxRss.max / MB).toFixed(1)})`,
    verdict(f.maxRss.max < 150 * MB),
  ])
  block.push(`peak RSS 1M msgs, prefetch ${f.prefetch}     ${(f.maxRss.median / MB).toFixed(1)} MB  (goal < 150)`)
}
if (goals.length > 0) {
  out()
  out('## Goals (issue 32: per-call cost against the floor; issues 9, 22 and 5: kept)')
  out()
  out(table(['goal', 'measured: geometric mean [95 % CI] of per-round ratios, or median (min–max)', 'verdict'], goals))
}
results.wallSeconds = (performance.now() - suiteStarted) / 1000
results.notes.push(`load average at end: ${loadavg()}`)
out()
out(`== bench ratios (${quick ? 'quick' : 'full'}; Node ${machine.node}; ${machine.parallelism} cores; median (min–max) over rounds) ==`)
for (const line of block) out(line)
out(`suite wall time ${results.wallSeconds.toFixed(1)} s; load average at end ${loadavg()}`)

const file =
  values.out ??
  new URL(`./results/bench-${quick ? 'quick' : 'full'}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url).pathname
mkdirSync(new URL('./results/', import.meta.url).pathname, { recursive: true })
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
log(`results written to ${file}`)

if (exportSections.length > 0) {
  // The export benchmark in its own process (it starts its own server), after this suite's figures.
  out()
  const script = new URL('./export/run.ts', import.meta.url).pathname
  const child = spawnSync(process.execPath, ['--expose-gc', script, ...(quick ? ['--quick'] : []), '--only', exportSections.join(',')], {
    stdio: 'inherit',
  })
  if (child.status !== 0) process.exitCode = child.status ?? 1
}
