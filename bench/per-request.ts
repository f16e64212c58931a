// Per-request benchmark: one page of 20 agents, sequential and at 32 in flight, for the raw-undici
// floor, the SDK and axios + zod (and, in the full run, the old floor as a labelled control),
// interleaved over rounds against one fake service in another process.
import diagnostics from 'node:diagnostics_channel'
import { agentsPage, axiosClient, oldFloor, rawFloor, sdk, type Contender } from './contenders.ts'
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

/** What one timed block measured. */
export interface BlockResult {
  p50: number
  p99: number
  rps: number
  /** Client CPU time (user + system, this process) per call, µs. */
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
export async function timedBlock(
  contender: Contender,
  count: number,
  concurrency: number,
  budgetMs: number,
  items = 20,
): Promise<BlockResult> {
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
  await Promise.all(Array.from({ length: concurrency }, worker))
  const wall = performance.now() - started
  const used = process.cpuUsage(cpu)
  const done = Array.from(latencies.subarray(0, completed))
  return {
    p50: percentile(done, 50),
    p99: percentile(done, 99),
    rps: (completed / wall) * 1000,
    cpuUs: (used.user + used.system) / completed,
    completed,
    truncated: completed < count,
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

async function warm(contender: Contender, calls: number, concurrency: number): Promise<void> {
  await timedBlock(contender, calls, concurrency, 20_000)
}

export async function perRequest(server: ServerInfo, config: PerRequestConfig, log: (line: string) => void): Promise<ContenderFigures[]> {
  const page = agentsPage()
  // The floor first: ratios are taken against contenders[0].
  const contenders = [rawFloor(server, page), sdk(server, page), axiosClient(server)]
  if (config.withOldFloor) contenders.push(oldFloor(server, page))
  try {
    const connections = new Map<string, number>()
    for (const c of contenders) connections.set(c.name, await connectionsOver(c, 100))
    for (const c of contenders) {
      await warm(c, config.warmUp, 1)
      await warm(c, config.warmUp, config.concurrency)
    }
    const results = new Map<string, { seq: BlockResult[]; con: BlockResult[] }>(contenders.map((c) => [c.name, { seq: [], con: [] }]))
    for (let round = 0; round < config.rounds; round++) {
      const started = performance.now()
      // Interleave: per round, all contenders' sequential blocks back to back, then all concurrent
      // blocks, in another order each round, so the blocks a ratio compares are adjacent in time.
      for (const c of rotate(contenders, round)) {
        collectGarbage()
        results.get(c.name)!.seq.push(await timedBlock(c, config.sequential, 1, config.blockBudgetMs))
      }
      for (const c of rotate(contenders, round + 1)) {
        collectGarbage()
        results.get(c.name)!.con.push(await timedBlock(c, config.concurrent, config.concurrency, config.blockBudgetMs))
      }
      log(`  per-request round ${round + 1}/${config.rounds}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
    }
    const floor = results.get(contenders[0]!.name)!
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
          seqP50: ratio(r.seq, floor.seq, 'p50'),
          conP50: ratio(r.con, floor.con, 'p50'),
          conRps: ratio(r.con, floor.con, 'rps'),
        },
        extraCpuUs: spread(r.con.map((b, i) => b.cpuUs - floor.con[i]!.cpuUs)),
        truncatedBlocks: [...r.seq, ...r.con].filter((b) => b.truncated).length,
        connectionsPer100: connections.get(c.name)!,
      }
    })
  } finally {
    for (const c of contenders) await c.close()
  }
}
