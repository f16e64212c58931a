// The whole-company export benchmark of issue 10 (see BENCHMARKS.md, "Export"). Against the lean
// export server in a child process (5 ms per request), directly and through the emulated 50 Mbit/s,
// 20 ms link: the SDK's nested loop, the SDK's listAll at concurrency 4/8/16/32 (n/a until it
// exists), and the hand-written raw-undici worker pool (the floor) at the same concurrency. Then the
// nightly section of issue 16 (bench/export/nightly.ts): night 2 with 5 % of the conversations
// grown, listNew against the full export and the hand-written incremental pass, and a night with
// nothing new.
// Contenders interleave over rounds; figures are medians with the min–max over rounds, ratios are
// taken per round. It reports and never fails on a figure.
//   npm run bench:export                     loopback + link, 2,000 conversations / 200,000 messages (~5 min)
//   npm run bench:export -- --only loopback  one section (loopback, link, nightly)
//   npm run bench:export -- --only loopback,nightly --concurrency 16 --no-nested --rounds 7
//                                            one concurrency, without the nested loop, more rounds
//   npm run bench / bench:quick run it too (bench/run.ts starts it): quick = 200 / 20,000, loopback, concurrency 16
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { collectGarbage, fmtSpread, machineInfo, rotate, spread, table, type Spread } from '../lib.ts'
import { listAll, nestedLoop, rawPool, type ExportContender, type ExportRun, type Target } from './contenders.ts'
import { spawnExportServer, type ExportStats, type SpawnedExportServer } from './control.ts'
import { probeSdk, SDK_MODES, type SdkFeatures } from './features.ts'
import { nightly, nightlyTable } from './nightly.ts'
import type { Encoding } from './server.ts'

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    rounds: { type: 'string' },
    // A subset of the loopback and nightly concurrencies, e.g. `--concurrency 16` (default: all).
    concurrency: { type: 'string' },
    // `--no-nested`: leave the nested loop out of the loopback section (no speed-up column then).
    nested: { type: 'boolean', default: true },
    out: { type: 'string' },
  },
  allowNegative: true,
})
const onlyConcurrency = values.concurrency?.split(',').map(Number)
const pick = (all: number[]): number[] => (onlyConcurrency === undefined ? all : all.filter((c) => onlyConcurrency.includes(c)))
const quick = values.quick
const sections = new Set((values.only ?? (quick ? 'loopback,nightly' : 'loopback,link,nightly')).split(','))
const config = quick
  ? { conversations: 200, messages: 20_000, rounds: 3, concurrency: [16], warmUpMessages: 5_000, runBudgetMs: 30_000 }
  : { conversations: 2_000, messages: 200_000, rounds: 3, concurrency: pick([4, 8, 16, 32]), warmUpMessages: 20_000, runBudgetMs: 120_000 }
/** The nightly section (issue 16): 5 % of the conversations grow by 1–5 messages. */
const NIGHTLY = {
  grow: { fraction: 0.05, maxAdded: 5 },
  concurrency: quick ? [16] : pick([8, 16]),
  rounds: values.rounds === undefined ? (quick ? 3 : 5) : Number(values.rounds),
}
const rounds = values.rounds === undefined ? config.rounds : Number(values.rounds)
const LATENCY_MS = 5
const LINK = { mbps: 50, rttMs: 20, concurrency: 16 }
/** Goal thresholds (issue 10). */
const GOAL = { speedUpOverNested: 12, vsPool: 1.15, vsLinkLimit: 1.2 }

const log = (line: string): void => void process.stderr.write(`${line}\n`)
const out = (line = ''): void => void process.stdout.write(`${line}\n`)
const sec = (s: Spread): string => fmtSpread({ ...s, median: s.median / 1000, min: s.min / 1000, max: s.max / 1000 }, 2)
// The goals are for the full dataset: on the quick one (299 requests) fixed costs (handshakes, the
// first conversation page) weigh ten times more, and even the floor stays under 12×.
const verdict = (met: boolean): string => (quick ? `indicative (quick dataset): ${met ? 'met' : 'missed'}` : met ? 'met' : 'MISSED')

/** One row of a section: a contender, or why it cannot run on this SDK build. */
interface Row {
  name: string
  concurrency: number
  /** Encoding the contender asks for (the SDK's default: whatever it negotiates). */
  asks: string
  make?: () => ExportContender
  unavailable?: string
  /** Row whose wall time is this row's floor (same concurrency and encoding). */
  floor?: string
}

interface RunFigures {
  run: ExportRun
  stats: ExportStats
}

interface RowFigures {
  name: string
  concurrency: number
  asks: string
  unavailable?: string
  served?: string
  wallMs?: Spread
  cpuMs?: Spread
  /** Most requests the server held at once, per run. */
  maxInFlight?: Spread
  messagesPerSec?: Spread
  requests?: number
  downBytesPerPage?: number
  upBytesPerRequest?: number
  downBytes?: number
  /** Per round: this wall / the floor row's wall. */
  vsFloor?: Spread
  /** Per round: the nested loop's wall / this wall. */
  speedUp?: Spread
  /** Per round: this wall / the link's limit for this run. */
  vsLimit?: Spread
  limitMs?: Spread
  meanServerDelayMs?: number
}

async function runSection(server: SpawnedExportServer, rows: Row[], label: string, nested?: string): Promise<RowFigures[]> {
  const live = rows.filter((r) => r.make !== undefined)
  const contenders = new Map(live.map((r) => [r.name, r.make!()]))
  const runs = new Map<string, RunFigures[]>(live.map((r) => [r.name, []]))
  try {
    for (const r of live) {
      await server.reset()
      await contenders.get(r.name)!.run(config.runBudgetMs, config.warmUpMessages)
    }
    for (let round = 0; round < rounds; round++) {
      const started = performance.now()
      for (const r of rotate(live, round)) {
        collectGarbage()
        await server.reset()
        const run = await contenders.get(r.name)!.run(config.runBudgetMs)
        const stats = await server.stats()
        if (stats.errors > 0) throw new Error(`${r.name}: the server answered ${stats.errors} requests with an error`)
        runs.get(r.name)!.push({ run, stats })
      }
      log(`  ${label} round ${round + 1}/${rounds}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
    }
  } finally {
    for (const c of contenders.values()) await c.close()
  }
  return rows.map((r) => {
    const mine = runs.get(r.name)
    if (mine === undefined) return { name: r.name, concurrency: r.concurrency, asks: r.asks, unavailable: r.unavailable ?? 'not run' }
    const floor = r.floor === undefined ? undefined : runs.get(r.floor)
    const base = nested === undefined ? undefined : runs.get(nested)
    const last = mine.at(-1)!.stats
    const requests = last.requests
    const served = Object.keys(last.byEncoding).join(', ')
    const bw = (LINK.mbps * 1e6) / 8 / 1000 // bytes per ms
    const limit = (f: RunFigures): number =>
      Math.max(f.stats.link.downBytes / bw, f.stats.link.upBytes / bw, (f.stats.requests * (LINK.rttMs + LATENCY_MS)) / r.concurrency)
    return {
      name: r.name,
      concurrency: r.concurrency,
      asks: r.asks,
      served,
      wallMs: spread(mine.map((f) => f.run.wallMs)),
      cpuMs: spread(mine.map((f) => f.run.cpuMs)),
      maxInFlight: spread(mine.map((f) => f.stats.maxInFlight)),
      messagesPerSec: spread(mine.map((f) => (f.run.messages / f.run.wallMs) * 1000)),
      requests,
      downBytes: last.link.downBytes,
      downBytesPerPage: last.link.downBytes / requests,
      upBytesPerRequest: last.link.upBytes / requests,
      meanServerDelayMs: last.meanDelayMs,
      limitMs: spread(mine.map(limit)),
      vsLimit: spread(mine.map((f) => f.run.wallMs / limit(f))),
      ...(floor === undefined ? {} : { vsFloor: spread(mine.map((f, i) => f.run.wallMs / floor[i]!.run.wallMs)) }),
      ...(base === undefined ? {} : { speedUp: spread(mine.map((f, i) => base[i]!.run.wallMs / f.run.wallMs)) }),
    }
  })
}

const ratio = (s: Spread | undefined, digits = 2): string => (s === undefined ? '–' : `${fmtSpread(s, digits)}×`)
const na = (f: RowFigures): string => `n/a (${f.unavailable ?? ''})`

const machine = machineInfo()
const started = performance.now()
out(`# chat-service-sdk export benchmark (${quick ? 'quick' : 'full'})`)
out()
out(`Node ${machine.node}, os.availableParallelism() = ${machine.parallelism}, ${machine.cpu}, ${machine.platform}`)
out(
  `Load average at start: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`,
)
const server = await spawnExportServer({
  conversations: config.conversations,
  messages: config.messages,
  latencyMs: LATENCY_MS,
  linkMbps: LINK.mbps,
  linkRttMs: LINK.rttMs,
  ...(sections.has('nightly') ? { grow: NIGHTLY.grow } : {}),
})
const results: Record<string, unknown> = { machine, quick, expected: server.expected }
const goals: string[][] = []
const block: string[] = []
try {
  const e = server.expected
  out(
    `Dataset: ${e.conversations.toLocaleString('en-US')} conversations, ${e.messages.toLocaleString('en-US')} messages; a nested loop at limit 100 makes ${e.requestsAtLimit100.toLocaleString('en-US')} requests. ` +
      `Export server (bench/export/server.ts) in a child process, ${LATENCY_MS} ms per request; started in ${(server.startUpMs / 1000).toFixed(1)} s (pages pre-rendered and pre-compressed, checked against the fake).`,
  )
  const direct: Target = { baseUrl: server.url, keyId: server.keyId, keySecret: server.keySecret, expected: e }
  const viaLink: Target = { ...direct, baseUrl: server.linkUrl }
  const features: SdkFeatures = await probeSdk(server, direct)
  results['features'] = features
  const sdkDefault = features.modes.default.ok ? features.modes.default.encoding : 'identity'
  out(
    `SDK build under test: listAll ${features.listAll ? 'present' : 'NOT implemented'}; default requests answered with ${sdkDefault}; ` +
      Object.entries(features.modes)
        .map(([k, m]) => `${SDK_MODES[k as keyof typeof SDK_MODES].label}: ${m.ok ? `works (${m.encoding})` : `n/a, ${m.reason}`}`)
        .join('; '),
  )
  const listAllMissing = 'not implemented'

  if (sections.has('loopback')) {
    const nested = 'SDK nested loop'
    const rows: Row[] = values.nested ? [{ name: nested, concurrency: 1, asks: 'SDK default', make: () => nestedLoop(direct, nested) }] : []
    for (const c of config.concurrency) {
      const pool = `raw undici pool @${c}`
      rows.push({ name: pool, concurrency: c, asks: sdkDefault, make: () => rawPool(direct, pool, c, sdkDefault) })
      const name = `SDK listAll @${c}`
      rows.push(
        features.listAll
          ? { name, concurrency: c, asks: 'SDK default', make: () => listAll(direct, name, c), floor: pool }
          : { name, concurrency: c, asks: 'SDK default', unavailable: listAllMissing },
      )
    }
    log(`export loopback: ${rounds} rounds × ${rows.filter((r) => r.make).length} contenders`)
    const figures = await runSection(server, rows, 'loopback', values.nested ? nested : undefined)
    results['loopback'] = figures
    out()
    out(`## Export over loopback: every message, limit 100, ${LATENCY_MS} ms per request`)
    out(
      `${rounds} rounds, contenders interleaved; each run exports everything and checks order and count. The raw pool asks for the encoding the SDK's default requests get (${sdkDefault}), so both decode the same bytes. Median over rounds (min–max).`,
    )
    out()
    out(
      table(
        [
          'contender',
          'wall s',
          'messages/s',
          'requests',
          'max in flight (server)',
          'client CPU s',
          'speed-up over nested loop',
          'wall / raw pool (same concurrency)',
        ],
        figures.map((f) =>
          f.unavailable !== undefined
            ? [f.name, na(f), '', '', '', '', '', '']
            : [
                f.name,
                sec(f.wallMs!),
                fmtSpread(f.messagesPerSec!, 0),
                String(f.requests),
                fmtSpread(f.maxInFlight!, 0),
                sec(f.cpuMs!),
                ratio(f.speedUp),
                ratio(f.vsFloor),
              ],
        ),
      ),
    )
    const floorMs = (c: number): number => (e.requestsAtLimit100 * LATENCY_MS) / c
    out()
    out(
      `Latency floor (requests × ${LATENCY_MS} ms / concurrency): nested loop ${(floorMs(1) / 1000).toFixed(1)} s; ` +
        config.concurrency.map((c) => `@${c} ${(floorMs(c) / 1000).toFixed(2)} s`).join(', ') +
        `. Mean server delay per request as measured by the server: ${(figures[0]?.meanServerDelayMs ?? 0).toFixed(2)} ms (timer overshoot included).`,
    )
    const at16 = figures.find((f) => f.name === 'SDK listAll @16')
    const pool16 = figures.find((f) => f.name === 'raw undici pool @16')
    if (at16 !== undefined && at16.unavailable === undefined && at16.vsFloor !== undefined) {
      if (at16.speedUp !== undefined) {
        goals.push([
          `listAll @16 ≥ ${GOAL.speedUpOverNested}× the nested loop`,
          ratio(at16.speedUp),
          verdict(at16.speedUp.median >= GOAL.speedUpOverNested),
        ])
      } else goals.push([`listAll @16 ≥ ${GOAL.speedUpOverNested}× the nested loop`, 'n/a (run with --no-nested)', 'n/a'])
      goals.push([
        `listAll @16 within ${GOAL.vsPool}× of the raw pool @16 (wall)`,
        ratio(at16.vsFloor),
        verdict(at16.vsFloor.median <= GOAL.vsPool),
      ])
      block.push(`export listAll@16 / raw pool@16 wall  ${ratio(at16.vsFloor)}  (goal ≤ ${GOAL.vsPool})`)
      if (at16.speedUp !== undefined)
        block.push(`export listAll@16 speed-up vs nested ${ratio(at16.speedUp)}  (goal ≥ ${GOAL.speedUpOverNested})`)
    } else if (at16 !== undefined) {
      goals.push([`listAll @16 ≥ ${GOAL.speedUpOverNested}× the nested loop`, `n/a (${listAllMissing})`, 'n/a'])
      goals.push([`listAll @16 within ${GOAL.vsPool}× of the raw pool @16 (wall)`, `n/a (${listAllMissing})`, 'n/a'])
      block.push(`export listAll@16 / raw pool@16 wall  n/a (${listAllMissing})`)
    }
    if (pool16?.speedUp !== undefined)
      block.push(`export raw pool@16 speed-up vs nested ${ratio(pool16.speedUp)}  (what listAll should reach)`)
  }

  if (sections.has('link')) {
    const c = LINK.concurrency
    const rows: Row[] = []
    const encodings: Encoding[] = ['identity', 'gzip', 'br']
    for (const encoding of encodings) {
      const name = `raw undici pool @${c}, ${encoding}`
      rows.push({ name, concurrency: c, asks: encoding, make: () => rawPool(viaLink, name, c, encoding) })
    }
    for (const key of ['off', 'default', 'gzip', 'br'] as const) {
      const mode = SDK_MODES[key]
      const result = features.modes[key]
      const name = `SDK listAll @${c}, ${mode.label}`
      const encoding = result.ok ? result.encoding : undefined
      const floor = encoding === undefined ? undefined : `raw undici pool @${c}, ${encoding}`
      const unavailable = !features.listAll ? listAllMissing : result.ok ? undefined : result.reason
      rows.push(
        unavailable === undefined
          ? {
              name,
              concurrency: c,
              asks: mode.label,
              make: () => listAll(viaLink, name, c, mode.setup()),
              ...(floor === undefined ? {} : { floor }),
            }
          : { name, concurrency: c, asks: mode.label, unavailable },
      )
    }
    log(`export over the link: ${rounds} rounds × ${rows.filter((r) => r.make).length} contenders`)
    const figures = await runSection(server, rows, 'link')
    results['link'] = figures
    out()
    out(
      `## Export over an emulated link: ${LINK.mbps} Mbit/s per direction, ${LINK.rttMs} ms round trip, ${LATENCY_MS} ms server, concurrency ${c}`,
    )
    out(
      `Through bench/export/link-proxy.ts. Wire bytes are what crossed the link (HTTP headers and bodies). Limit = max(bytes down / bandwidth, bytes up / bandwidth, requests × (${LINK.rttMs} + ${LATENCY_MS}) ms / ${c}), per run. Median over ${rounds} rounds (min–max).`,
    )
    out()
    out(
      table(
        [
          'contender',
          'served',
          'wire bytes / page (down)',
          'wire bytes / request (up)',
          'down MB',
          'wall s',
          'limit s',
          'wall / limit',
          'wall / raw pool (same encoding)',
        ],
        figures.map((f) =>
          f.unavailable !== undefined
            ? [f.name, na(f), '', '', '', '', '', '', '']
            : [
                f.name,
                f.served ?? '',
                (f.downBytesPerPage ?? 0).toFixed(0),
                (f.upBytesPerRequest ?? 0).toFixed(0),
                ((f.downBytes ?? 0) / 1e6).toFixed(1),
                sec(f.wallMs!),
                sec(f.limitMs!),
                ratio(f.vsLimit),
                ratio(f.vsFloor),
              ],
        ),
      ),
    )
    for (const key of ['default', 'gzip', 'br'] as const) {
      const f = figures.find((x) => x.name === `SDK listAll @${c}, ${SDK_MODES[key].label}`)
      const label = `listAll @${c} with compression (${SDK_MODES[key].label}) within ${GOAL.vsLinkLimit}× of the link limit`
      if (f?.vsLimit !== undefined && f.served !== 'identity') {
        goals.push([label, ratio(f.vsLimit), verdict(f.vsLimit.median <= GOAL.vsLinkLimit)])
      } else goals.push([label, f?.unavailable !== undefined ? `n/a (${f.unavailable})` : 'n/a (served identity)', 'n/a'])
    }
    for (const encoding of ['gzip', 'br']) {
      const f = figures.find((x) => x.name === `raw undici pool @${c}, ${encoding}`)
      if (f?.vsLimit !== undefined)
        goals.push([`(floor) raw pool @${c}, ${encoding}, against the link limit`, ratio(f.vsLimit), 'reference'])
    }
  }

  if (sections.has('nightly')) {
    log(`export nightly: ${NIGHTLY.rounds} rounds × ${NIGHTLY.concurrency.length * 5} contenders`)
    const result = await nightly(
      server,
      direct,
      sdkDefault,
      { concurrency: NIGHTLY.concurrency, rounds: NIGHTLY.rounds, runBudgetMs: config.runBudgetMs },
      log,
    )
    results['nightly'] = result
    out()
    out(
      `## Only what is new: night 2 with ${NIGHTLY.grow.fraction * 100} % of the conversations grown by 1–${NIGHTLY.grow.maxAdded} messages, limit 100, ${LATENCY_MS} ms per request`,
    )
    if (typeof result === 'string') {
      out(`n/a (${result})`)
      goals.push(['nightly (issue 16)', `n/a (${result})`, 'n/a'])
    } else {
      out(
        `${NIGHTLY.rounds} rounds, contenders interleaved; every run is checked exactly (ids and order) against what that night must deliver. Requests counted by the server per run. The hand-written pass asks for ${sdkDefault}, as the SDK gets. Median over rounds (min–max); ratios per round.`,
      )
      out()
      out(nightlyTable(result))
      for (const g of result.goals) goals.push([`(16) ${g[0]!}`, g[1]!, quick ? `indicative (quick dataset): ${g[2]!}` : g[2]!])
      block.push(...result.block)
    }
  }
} finally {
  await server.stop()
}

if (goals.length > 0) {
  out()
  out('## Goals (issues 10 and 16)')
  out()
  out(table(['goal', 'measured: median (min–max over rounds)', 'verdict'], goals))
}
const wall = (performance.now() - started) / 1000
out()
out(`== export ratios (${quick ? 'quick' : 'full'}; Node ${machine.node}; ${machine.parallelism} cores) ==`)
for (const line of block) out(line)
out(
  `export wall time ${wall.toFixed(1)} s; load average at end ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`,
)
results['goals'] = goals
results['wallSeconds'] = wall
const file =
  values.out ??
  new URL(`../results/export-${quick ? 'quick' : 'full'}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url).pathname
mkdirSync(new URL('../results/', import.meta.url).pathname, { recursive: true })
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
log(`results written to ${file}`)
