// Per-request benchmark: one page of 20 agents, sequential and at 32 in flight, for the raw-undici
// floor, the SDK, the strict floor (a reference) and axios + zod (and, in the full run, the old
// floor as a labelled control),
// against one fake service in another process.
//
// Pairing. The goals are ratios of the SDK to the floor, and on a shared machine the load moves
// from second to second. So in every round and mode the floor and the SDK run in ABBA order, each
// as two half-blocks (floor, SDK, SDK, floor; the next round SDK, floor, floor, SDK): both halves
// of a contender are merged, and a load change that drifts across the four half-blocks weighs on
// both alike. The other contenders run after the pair, in another order each round.
import diagnostics from 'node:diagnostics_channel'
import { agentsPage, axiosClient, oldFloor, rawFloor, sdk, strictFloor, type Contender } from './contenders.ts'
import type { ServerInfo } from './fake.ts'
import { collectGarbage, Deadline, percentile, rotate, spread, type Spread } from './lib.ts'

export interface PerRequestConfig {
  rounds: number
  /** Requests per contender per round, sequential. */
  sequential: number
  /** Requests per contender per round at `concurrency` in flight. */
  concurrent: number
  concurrency: number
  /** Untimed calls per contender before the first round (each mode). */
  warmUp: number
  /** Wall-clock cap of one contender's timed block; a block stops early (and says so) when it is spent. */
  blockBudgetMs: number
  /** Also run the old floor of issue 5 (raw undici without `reset: false`), labelled as a control. */
  withOldFloor: boolean
}

/** What one timed block measured, raw (blocks of one contender and round are merged before summarising). */
export interface RawBlock {
  /** Latency of each completed call, ms. */
  latencies: Float64Array
  wallMs: number
  /** Client CPU time (user + system, this process), µs. */
  cpuUs: number
  completed: number
  truncated: boolean
}

/** A block's (or merged blocks') summary. */
export interface BlockResult {
  p50: number
  p99: number
  rps: number
  /** Client CPU time per call, µs. */
  cpuUs: number
  completed: number
  truncated: boolean
}

export interface ContenderFigures {
  name: string
  sequential: { p50: Spread; p99: Spread; rps: Spread; cpuUs: Spread }
  concurrent: { p50: Spread; p99: Spread; rps: Spread; cpuUs: Spread }
  /** Per-round ratios against the floor (paired: same round, adjacent in time). */
  vsFloor: { seqP50: Spread; conP50: Spread; conRps: Spread }
  /** Per-round difference of client CPU per call at `concurrency` in flight against the floor, µs. */
  extraCpuUs: Spread
  truncatedBlocks: number
  /** New TCP connections over 100 sequential calls (measured once, before the warm-up). */
  connectionsPer100: number
}

/** Runs `count` calls with `concurrency` in flight (1 = sequential), bounded by `budgetMs`; each must return `items`. */
export async function rawBlock(contender: Contender, count: number, concurrency: number, budgetMs: number, items = 20): Promise<RawBlock> {
  const deadline = new Deadline(budgetMs, `${contender.name} block`)
  const latencies = new Float64Array(count)
  let next = 0
  let completed = 0
  const worker = async (): Promise<void> => {
    while (next < count && !deadline.passed) {
      const i = next++
      const started = performance.now()
      const got = await contender.call()
      latencies[i] = performance.now() - started
      completed++
      if (got !== items) throw new Error(`${contender.name}: expected ${items} items, got ${got}`)
    }
  }
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  const wallMs = performance.now() - started
  const used = process.cpuUsage(cpu)
  return { latencies: latencies.subarray(0, completed), wallMs, cpuUs: used.user + used.system, completed, truncated: completed < count }
}

/** Merges blocks of one contender (its two halves of an ABBA pair) into one result. */
export function summarize(blocks: readonly RawBlock[]): BlockResult {
  const latencies = blocks.flatMap((b) => Array.from(b.latencies))
  const completed = blocks.reduce((n, b) => n + b.completed, 0)
  const wallMs = blocks.reduce((n, b) => n + b.wallMs, 0)
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    rps: (completed / wallMs) * 1000,
    cpuUs: blocks.reduce((n, b) => n + b.cpuUs, 0) / completed,
    completed,
    truncated: blocks.some((b) => b.truncated),
  }
}

/** New TCP connections opened (node:net's `net.client.socket` channel) over `calls` sequential calls, after one call to open the pool. */
export async function connectionsOver(contender: Contender, calls: number): Promise<number> {
  await contender.call()
  let sockets = 0
  const onSocket = (): void => {
    sockets++
  }
  diagnostics.subscribe('net.client.socket', onSocket)
  try {
    for (let i = 0; i < calls; i++) await contender.call()
  } finally {
    diagnostics.unsubscribe('net.client.socket', onSocket)
  }
  return sockets
}

/**
 * Runs the per-request blocks. By default the floor and the SDK are the ABBA pair and the others
 * follow; with `pair` ([reference, contender], e.g. an earlier version of the SDK and today's), only
 * that pair runs, and the ratios in `vsFloor` are against its reference.
 */
export async function perRequest(
  server: ServerInfo,
  config: PerRequestConfig,
  log: (line: string) => void,
  pair?: readonly [Contender, Contender],
): Promise<ContenderFigures[]> {
  const page = agentsPage()
  // The reference first: ratios are taken against contenders[0]; contenders[1] (the SDK) is its pair.
  const contenders = pair ? [...pair] : [rawFloor(server, page), sdk(server, page), strictFloor(server, page), axiosClient(server)]
  if (config.withOldFloor && !pair) contenders.push(oldFloor(server, page))
  const [floor, mine, ...others] = contenders as [Contender, Contender, ...Contender[]]
  const block = (c: Contender, count: number, concurrency: number): Promise<RawBlock> => {
    collectGarbage()
    return rawBlock(c, count, concurrency, config.blockBudgetMs)
  }
  try {
    const connections = new Map<string, number>()
    for (const c of contenders) connections.set(c.name, await connectionsOver(c, 100))
    for (const c of contenders) {
      await rawBlock(c, config.warmUp, 1, 20_000)
      await rawBlock(c, config.warmUp, config.concurrency, 20_000)
    }
    const results = new Map<string, { seq: BlockResult[]; con: BlockResult[] }>(contenders.map((c) => [c.name, { seq: [], con: [] }]))
    for (let round = 0; round < config.rounds; round++) {
      const started = performance.now()
      for (const mode of ['seq', 'con'] as const) {
        const count = mode === 'seq' ? config.sequential : config.concurrent
        const concurrency = mode === 'seq' ? 1 : config.concurrency
        const half = Math.ceil(count / 2)
        const [a, b] = round % 2 === 0 ? [floor, mine] : [mine, floor]
        const a1 = await block(a, half, concurrency)
        const b1 = await block(b, half, concurrency)
        const b2 = await block(b, half, concurrency)
        const a2 = await block(a, half, concurrency)
        results.get(a.name)![mode].push(summarize([a1, a2]))
        results.get(b.name)![mode].push(summarize([b1, b2]))
        for (const c of rotate(others, round)) results.get(c.name)![mode].push(summarize([await block(c, count, concurrency)]))
      }
      log(`  per-request round ${round + 1}/${config.rounds}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
    }
    const base = results.get(floor.name)!
    return contenders.map((c) => {
      const r = results.get(c.name)!
      const pick = (blocks: BlockResult[], key: 'p50' | 'p99' | 'rps' | 'cpuUs'): Spread => spread(blocks.map((b) => b[key]))
      const ratio = (mine: BlockResult[], theirs: BlockResult[], key: 'p50' | 'rps'): Spread =>
        spread(mine.map((b, i) => b[key] / theirs[i]![key]))
      return {
        name: c.name,
        sequential: { p50: pick(r.seq, 'p50'), p99: pick(r.seq, 'p99'), rps: pick(r.seq, 'rps'), cpuUs: pick(r.seq, 'cpuUs') },
        concurrent: { p50: pick(r.con, 'p50'), p99: pick(r.con, 'p99'), rps: pick(r.con, 'rps'), cpuUs: pick(r.con, 'cpuUs') },
        vsFloor: {
          seqP50: ratio(r.seq, base.seq, 'p50'),
          conP50: ratio(r.con, base.con, 'p50'),
          conRps: ratio(r.con, base.con, 'rps'),
        },
        extraCpuUs: spread(r.con.map((b, i) => b.cpuUs - base.con[i]!.cpuUs)),
        truncatedBlocks: [...r.seq, ...r.con].filter((b) => b.truncated).length,
        connectionsPer100: connections.get(c.name)!,
      }
    })
  } finally {
    for (const c of contenders) await c.close()
  }
}
