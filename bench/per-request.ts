// Per-request benchmark: one page of 20 agents, sequential and at 32 concurrent, for raw undici,
// the SDK and axios + zod, interleaved over rounds against one fake service in another process.
import diagnostics from 'node:diagnostics_channel'
import { axiosClient, rawUndici, sdk, type Contender, type ServerInfo } from './contenders.ts'
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
  /** Also run the SDK with a `reset: false` dispatcher (what the suggested transport fix would give). */
  withFixPreview: boolean
}

/** What one timed block measured. */
export interface BlockResult {
  p50: number
  p99: number
  rps: number
  completed: number
  truncated: boolean
}

export interface ContenderFigures {
  name: string
  sequential: { p50: Spread; p99: Spread; rps: Spread }
  concurrent: { p50: Spread; p99: Spread; rps: Spread }
  /** Per-round ratios against raw undici (paired: same round, adjacent in time). */
  vsRaw: { seqP50: Spread; conP50: Spread; conRps: Spread }
  truncatedBlocks: number
  /** New TCP connections over 100 sequential calls (measured once, before the warm-up). */
  connectionsPer100: number
}

/** Runs `count` calls with `concurrency` in flight (1 = sequential), bounded by `budgetMs`. */
export async function timedBlock(contender: Contender, count: number, concurrency: number, budgetMs: number): Promise<BlockResult> {
  const deadline = new Deadline(budgetMs, `${contender.name} block`)
  const latencies = new Float64Array(count)
  let next = 0
  let completed = 0
  const worker = async (): Promise<void> => {
    while (next < count && !deadline.passed) {
      const i = next++
      const started = performance.now()
      const items = await contender.call()
      latencies[i] = performance.now() - started
      completed++
      if (items !== 20) throw new Error(`${contender.name}: expected 20 agents, got ${items}`)
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, worker))
  const wall = performance.now() - started
  const done = Array.from(latencies.subarray(0, completed))
  return { p50: percentile(done, 50), p99: percentile(done, 99), rps: (completed / wall) * 1000, completed, truncated: completed < count }
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
  const contenders = [rawUndici(server), rawUndici(server, true), sdk(server), axiosClient(server)]
  if (config.withFixPreview) contenders.push(sdk(server, true))
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
      // Interleave: each round runs the contenders in another order, the sequential then the concurrent block.
      for (const c of rotate(contenders, round)) {
        collectGarbage()
        results.get(c.name)!.seq.push(await timedBlock(c, config.sequential, 1, config.blockBudgetMs))
        collectGarbage()
        results.get(c.name)!.con.push(await timedBlock(c, config.concurrent, config.concurrency, config.blockBudgetMs))
      }
      log(`  per-request round ${round + 1}/${config.rounds}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
    }
    const raw = results.get(contenders[0]!.name)!
    return contenders.map((c) => {
      const r = results.get(c.name)!
      const pick = (blocks: BlockResult[], key: 'p50' | 'p99' | 'rps'): Spread => spread(blocks.map((b) => b[key]))
      const ratio = (mine: BlockResult[], theirs: BlockResult[], key: 'p50' | 'rps'): Spread =>
        spread(mine.map((b, i) => b[key] / theirs[i]![key]))
      return {
        name: c.name,
        sequential: { p50: pick(r.seq, 'p50'), p99: pick(r.seq, 'p99'), rps: pick(r.seq, 'rps') },
        concurrent: { p50: pick(r.con, 'p50'), p99: pick(r.con, 'p99'), rps: pick(r.con, 'rps') },
        vsRaw: { seqP50: ratio(r.seq, raw.seq, 'p50'), conP50: ratio(r.con, raw.con, 'p50'), conRps: ratio(r.con, raw.con, 'rps') },
        truncatedBlocks: [...r.seq, ...r.con].filter((b) => b.truncated).length,
        connectionsPer100: connections.get(c.name)!,
      }
    })
  } finally {
    for (const c of contenders) await c.close()
  }
}
