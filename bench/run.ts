// The benchmark suite of issue 5 (see BENCHMARKS.md). Every comparison runs side by side in this
// one run, against fake services in separate processes (scripts/fake-server.ts), interleaving the
// contenders over rounds; it prints medians with the min–max over rounds. It reports; it never
// fails on a figure (it exits non-zero only when a benchmark cannot run or a contender misbehaves).
//   npm run bench                 full suite (~6 min on 2 cores)
//   npm run bench:quick           per-request comparison + a short prefetch comparison (< 1 min)
//   npm run bench -- --only request,iterate,memory,schema   a subset
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { spawnFake, type SpawnedFake } from '../scripts/spawn-fake.ts'
import { tryFetchGetBody, verifyAxiosSendsGetBody } from './contenders.ts'
import { iteration, type IterationConfig, type IterationFigures } from './iteration.ts'
import { fmtSpread, machineInfo, MB, spread, table, type Spread } from './lib.ts'
import { memory, type MemoryConfig, type MemoryFigures } from './memory.ts'
import { perRequest, type ContenderFigures, type PerRequestConfig } from './per-request.ts'
import { schemaCost, type SchemaConfig, type SchemaFigures } from './schema.ts'

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
  },
})
const quick = values.quick
const sections = new Set((values.only ?? (quick ? 'request,iterate' : 'request,iterate,memory,schema')).split(','))
const LATENCY_MS = 5

const perRequestConfig: PerRequestConfig = quick
  ? { rounds: 3, sequential: 300, concurrent: 1_200, concurrency: 32, warmUp: 300, blockBudgetMs: 5_000, withFixPreview: false }
  : { rounds: 5, sequential: 1_500, concurrent: 4_000, concurrency: 32, warmUp: 1_000, blockBudgetMs: 15_000, withFixPreview: true }
const iterationConfig: IterationConfig = quick
  ? { rounds: 3, messages: 10_000, limit: 100, prefetch: [0, 4], previewFix: [], runBudgetMs: 10_000 }
  : { rounds: 5, messages: 100_000, limit: 100, prefetch: [0, 1, 2, 4, 8], previewFix: [0, 4], runBudgetMs: 60_000 }
const memoryConfig: MemoryConfig = { rounds: 3, messages: 1_000_000, prefetch: [0, 8], runBudgetMs: 120_000 }
const schemaConfig: SchemaConfig = { rounds: 5, ops: 1_000, requests: 300, batchBudgetMs: 3_000 }

const log = (line: string): void => void process.stderr.write(`${line}\n`)
const out = (line = ''): void => void process.stdout.write(`${line}\n`)
const ms = (s: Spread, d = 2): string => fmtSpread(s, d)
const us = (s: Spread): string => fmtSpread({ ...s, median: s.median * 1000, min: s.min * 1000, max: s.max * 1000 }, 0)
const ratioOf = (a: Spread, b: Spread): Spread => spread(a.values.map((v, i) => v / b.values[i]!))
const verdict = (met: boolean): string => (met ? 'met' : 'MISSED')

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
out(
  `Load average at start (1/5/15 min): ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')} (anything well above 0 means other work shares the ${machine.parallelism} cores)`,
)
out(
  `Client in this process (or a child for memory); fake service in a separate process on 127.0.0.1; gc between blocks: ${typeof (globalThis as { gc?: unknown }).gc === 'function' ? 'yes' : 'no'}`,
)

const results: {
  machine: typeof machine
  quick: boolean
  notes: string[]
  perRequest?: ContenderFigures[]
  iteration?: IterationFigures[]
  memory?: MemoryFigures[]
  schema?: SchemaFigures[]
  wallSeconds?: number
} = { machine, quick, notes: [] }

if (sections.has('request') || sections.has('schema')) {
  await withServer(['--agents', '20', '--customer-users', '100', '--conversations', '1', '--messages', '200'], async (server) => {
    const notes = [await verifyAxiosSendsGetBody(), await tryFetchGetBody(server)]
    results.notes.push(...notes)
    out()
    for (const note of notes) out(`Note: ${note}`)

    if (sections.has('request')) {
      const c = perRequestConfig
      log(
        `per-request: ${c.rounds} rounds × (${c.sequential} sequential + ${c.concurrent} at ${c.concurrency} concurrent) per contender, ${c.warmUp} warm-up calls each`,
      )
      const figures = await perRequest(server, c, log)
      results.perRequest = figures
      out()
      out(`## Per request: GET /rest/v1/agents?limit=20 (one page of 20 agents)`)
      out(
        `${c.rounds} rounds, contenders interleaved; per round and contender ${c.sequential} sequential calls, then ${c.concurrent} calls with ${c.concurrency} in flight. Median over rounds (min–max).`,
      )
      out()
      out(
        table(
          [
            'contender',
            'seq p50 µs',
            'seq p99 µs',
            'seq req/s',
            `@${c.concurrency} p50 µs`,
            `@${c.concurrency} p99 µs`,
            `@${c.concurrency} req/s`,
            'new conns / 100 calls',
          ],
          figures.map((f) => [
            f.name,
            us(f.sequential.p50),
            us(f.sequential.p99),
            fmtSpread(f.sequential.rps, 0),
            us(f.concurrent.p50),
            us(f.concurrent.p99),
            fmtSpread(f.concurrent.rps, 0),
            String(f.connectionsPer100),
          ]),
        ),
      )
      out()
      const ka = figures.find((f) => f.name === 'raw undici, reset: false')!
      out(
        table(
          [
            'contender',
            'seq p50 / raw',
            `@${c.concurrency} p50 / raw`,
            `@${c.concurrency} req/s / raw`,
            'seq p50 / raw reset:false',
            `@${c.concurrency} req/s / raw reset:false`,
          ],
          figures.map((f) => [
            f.name,
            ms(f.vsRaw.seqP50),
            ms(f.vsRaw.conP50),
            ms(f.vsRaw.conRps),
            ms(ratioOf(f.sequential.p50, ka.sequential.p50)),
            ms(ratioOf(f.concurrent.rps, ka.concurrent.rps)),
          ]),
        ),
      )
      out('Ratios are per round (contenders adjacent in time), then the median (min–max) over rounds.')
      const truncated = figures.reduce((n, f) => n + f.truncatedBlocks, 0)
      if (truncated > 0) out(`(${truncated} timed blocks hit their time cap and ran fewer calls)`)
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
            'raw undici p50 µs',
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
        ['prefetch', 'wall s', 'pages/s', 'speed-up vs sequential (same client)'],
        figures.map((f) => [
          f.label === '0' ? '0 (sequential)' : f.label,
          fmtSpread({ ...f.wallMs, median: f.wallMs.median / 1000, min: f.wallMs.min / 1000, max: f.wallMs.max / 1000 }, 2),
          fmtSpread(f.pagesPerSec, 0),
          `${fmtSpread(f.speedup, 2)}×`,
        ]),
      ),
    )
  })
}

if (sections.has('memory')) {
  const c = memoryConfig
  await withServer(['--conversations', '1', '--messages', String(c.messages)], async (server) => {
    log(
      `memory: ${c.rounds} rounds × (baseline + prefetch [${c.prefetch.join(', ')}]), ${c.messages} messages, each client in its own process`,
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

// Goals (issue 5) and the compact ratio block CI logs show.
const goals: string[][] = []
const block: string[] = []
const raw = results.perRequest?.find((f) => f.name === 'raw undici')
const sdk = results.perRequest?.find((f) => f.name === 'SDK')
const ax = results.perRequest?.find((f) => f.name === 'axios + zod')
if (raw && sdk && ax) {
  const seq = sdk.vsRaw.seqP50
  const thr = sdk.vsRaw.conRps
  const vsAxSeq = ratioOf(sdk.sequential.p50, ax.sequential.p50)
  const vsAxCon = ratioOf(sdk.concurrent.rps, ax.concurrent.rps)
  goals.push(['SDK per-request median ≤ 1.15× raw undici (sequential p50)', `${ms(seq)}×`, verdict(seq.median <= 1.15)])
  goals.push(['SDK throughput at 32 concurrent ≥ 0.9× raw undici', `${ms(thr)}×`, verdict(thr.median >= 0.9)])
  goals.push([
    'SDK faster than axios + zod (seq p50 ratio < 1, req/s at 32 ratio > 1)',
    `p50 ${ms(vsAxSeq)}×, req/s ${ms(vsAxCon)}×`,
    verdict(vsAxSeq.median < 1 && vsAxCon.median > 1),
  ])
  const ka = results.perRequest?.find((f) => f.name === 'raw undici, reset: false')
  if (ka) {
    const kaSeq = ratioOf(sdk.sequential.p50, ka.sequential.p50)
    const kaThr = ratioOf(sdk.concurrent.rps, ka.concurrent.rps)
    goals.push([
      '(same two goals against raw undici with reset: false, the keep-alive floor)',
      `p50 ${ms(kaSeq)}×, req/s at 32 ${ms(kaThr)}×`,
      `${verdict(kaSeq.median <= 1.15)} / ${verdict(kaThr.median >= 0.9)}`,
    ])
    block.push(`SDK/raw(reset:false) p50 seq ${ms(kaSeq)}, req/s at 32 ${ms(kaThr)}`)
  }
  block.push(`SDK/raw p50 sequential     ${ms(seq)}  (goal ≤ 1.15)`)
  block.push(`SDK/raw p50 at 32          ${ms(sdk.vsRaw.conP50)}`)
  block.push(`SDK/raw req/s at 32        ${ms(thr)}  (goal ≥ 0.90)`)
  block.push(`SDK/axios p50 sequential   ${ms(vsAxSeq)}  (goal < 1)`)
  block.push(`SDK/axios req/s at 32      ${ms(vsAxCon)}  (goal > 1)`)
}
const p0 = results.iteration?.find((f) => f.prefetch === 0 && !f.preview)
const p4 = results.iteration?.find((f) => f.prefetch === 4 && !f.preview)
const p4Fix = results.iteration?.find((f) => f.prefetch === 4 && f.preview)
if (p0 && p4) {
  goals.push([`prefetch 4 ≥ 3× faster than sequential (${LATENCY_MS} ms server)`, `${ms(p4.speedup)}×`, verdict(p4.speedup.median >= 3)])
  block.push(
    `prefetch 4 speed-up        ${ms(p4.speedup)}×  (goal ≥ 3; ${iterationConfig.messages / iterationConfig.limit} pages at ${LATENCY_MS} ms)`,
  )
  if (p4Fix) {
    goals.push([
      '(prefetch 4 goal, SDK + reset: false dispatcher, against its own sequential)',
      `${ms(p4Fix.speedup)}×`,
      verdict(p4Fix.speedup.median >= 3),
    ])
  }
}
for (const f of results.memory ?? []) {
  if (!f.goalRow || f.prefetch === undefined) continue
  goals.push([
    `1,000,000 messages, client peak RSS < 150 MB (prefetch ${f.prefetch})`,
    `${(f.maxRss.median / MB).toFixed(1)} MB (max ${(f.maxRss.max / MB).toFixed(1)})`,
    verdict(f.maxRss.max < 150 * MB),
  ])
  block.push(`peak RSS 1M msgs, prefetch ${f.prefetch}  ${(f.maxRss.median / MB).toFixed(1)} MB  (goal < 150)`)
}
if (goals.length > 0) {
  out()
  out('## Goals (issue 5)')
  out()
  out(table(['goal', 'measured: median (min–max over rounds)', 'verdict'], goals))
}
results.wallSeconds = (performance.now() - suiteStarted) / 1000
results.notes.push(
  `load average at end: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`,
)
out()
out(`== bench ratios (${quick ? 'quick' : 'full'}; Node ${machine.node}; ${machine.parallelism} cores; median (min–max) over rounds) ==`)
for (const line of block) out(line)
out(
  `suite wall time ${results.wallSeconds.toFixed(1)} s; load average at end ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`,
)

const file =
  values.out ??
  new URL(`./results/bench-${quick ? 'quick' : 'full'}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url).pathname
mkdirSync(new URL('./results/', import.meta.url).pathname, { recursive: true })
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
log(`results written to ${file}`)
