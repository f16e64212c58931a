// The per-call comparison method (issue 32): every contender in a process of its own
// (bench/contender-process.ts), a reference and a contender run in ABBA half-blocks (A B B A, the
// next round B A A B) so that a load that drifts weighs on both sides alike, many short rounds,
// and each ratio taken per round, then summarised as a geometric mean with a 95 % confidence
// interval (Student's t on the per-round log ratios; see `ratioStat` in lib.ts). Client CPU time
// per call (`process.cpuUsage()` of the contender's own process) is measured beside wall time: on
// a busy machine it moves far less than wall time does.
//
// How small a change this sees is printed with every ratio (the interval's half-width) and
// described in BENCHMARKS.md ("Per-call cost (0.4)"): an A/A run (the same
// contender on both sides) and a planted slowdown (`--plant`).
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { once } from 'node:events'
import { createInterface, type Interface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import type { ServerInfo } from './fake.ts'
import { ratioStat, rotate, spread, type RatioStat, type Spread } from './lib.ts'

/** A contender to run in its own process. */
export interface ProcessSpec {
  /** `floor`, `sdk`, `strict`, `axios`, `old-floor` or `sdk-at:DIR` (see `contenderNamed`). */
  readonly contender: string
  /** Busy work after each call worth this fraction of the contender's own CPU per call (a method check). */
  readonly plant?: number | undefined
  /** Shown instead of the contender's own name (e.g. "SDK (A/A, second process)"). */
  readonly label?: string | undefined
}

/** What one block measured. */
export interface BlockFigures {
  wallMs: number
  cpuUs: number
  p50: number
  p99: number
  completed: number
}

/** One contender in its own process, answering commands (see bench/contender-process.ts). */
export class ContenderProcess {
  readonly name: string
  readonly #child: ChildProcessByStdio<Writable, Readable, null>
  readonly #lines: AsyncIterator<string>
  readonly #rl: Interface

  private constructor(name: string, child: ChildProcessByStdio<Writable, Readable, null>, rl: Interface, lines: AsyncIterator<string>) {
    this.name = name
    this.#child = child
    this.#rl = rl
    this.#lines = lines
  }

  static async start(spec: ProcessSpec, server: ServerInfo, page = 'agents'): Promise<ContenderProcess> {
    const args = [
      '--expose-gc',
      new URL('./contender-process.ts', import.meta.url).pathname,
      '--contender',
      spec.contender,
      '--server',
      JSON.stringify(server),
      '--page',
      page,
      ...(spec.plant === undefined ? [] : ['--plant', String(spec.plant)]),
    ]
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] })
    const rl = createInterface({ input: child.stdout })
    const lines = rl[Symbol.asyncIterator]()
    const exited = once(child, 'exit').then(([code]) => {
      throw new Error(`contender process ${spec.contender} exited with ${String(code)}`)
    })
    exited.catch(() => undefined)
    const first = await Promise.race([lines.next(), exited])
    const ready = JSON.parse(String(first.value)) as { name: string }
    return new ContenderProcess(spec.label ?? ready.name, child, rl, lines)
  }

  /** Sends one command and resolves with its answer. */
  async ask(command: Record<string, unknown>): Promise<Record<string, number>> {
    this.#child.stdin.write(`${JSON.stringify(command)}\n`)
    const next = await this.#lines.next()
    if (next.done === true) throw new Error(`${this.name}: the contender process ended`)
    return JSON.parse(next.value) as Record<string, number>
  }

  async block(calls: number, concurrency: number): Promise<BlockFigures> {
    return (await this.ask({ cmd: 'block', calls, concurrency })) as unknown as BlockFigures
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode !== null) return
    const gone = once(this.#child, 'exit')
    this.#child.stdin.end()
    this.#rl.close()
    const killer = setTimeout(() => this.#child.kill('SIGKILL'), 10_000)
    await gone
    clearTimeout(killer)
  }
}

export interface PairedConfig {
  rounds: number
  /** Calls per contender per round, sequential (two half-blocks for the pair). */
  sequential: number
  /** Calls per contender per round at `concurrency` in flight. */
  concurrent: number
  concurrency: number
  /** Untimed calls per contender before the first round, each mode. */
  warmUp: number
}

export type Mode = 'seq' | 'con'

/** A contender's figures in one mode, median (min–max) over rounds. */
export interface ModeFigures {
  /** Wall time per call, µs (the block's wall time / calls: 1 / throughput). */
  wallUs: Spread
  /** Client CPU time per call, µs (user + system of the contender's process over the block). */
  cpuUs: Spread
  /** Latency of single calls, µs. */
  p50: Spread
  p99: Spread
  /** Calls per second. */
  rps: Spread
}

/** Ratios of a contender to the reference, per round, as {@link RatioStat}s (contender / reference). */
export interface ModeRatios {
  wall: RatioStat
  cpu: RatioStat
  p50: RatioStat
  /** Calls per second, contender / reference (= the inverse of `wall`). */
  rps: RatioStat
  /** Per-round difference of CPU per call, µs (contender − reference). */
  extraCpuUs: Spread
}

export interface PairedFigures {
  name: string
  seq: ModeFigures
  con: ModeFigures
  /** Against the reference (the first contender); `undefined` for the reference itself. */
  vs?: { seq: ModeRatios; con: ModeRatios } | undefined
  /** New TCP connections over 100 sequential calls. */
  connectionsPer100: number
  /** Raw blocks per round (merged halves for the pair). */
  rounds: { seq: BlockFigures[]; con: BlockFigures[] }
}

/** Sums the two halves of an ABBA pair (their p50/p99 are averaged). */
function merge(a: BlockFigures, b: BlockFigures): BlockFigures {
  return {
    wallMs: a.wallMs + b.wallMs,
    cpuUs: a.cpuUs + b.cpuUs,
    p50: (a.p50 + b.p50) / 2,
    p99: (a.p99 + b.p99) / 2,
    completed: a.completed + b.completed,
  }
}

function modeFigures(blocks: readonly BlockFigures[]): ModeFigures {
  return {
    wallUs: spread(blocks.map((b) => (b.wallMs * 1000) / b.completed)),
    cpuUs: spread(blocks.map((b) => b.cpuUs / b.completed)),
    p50: spread(blocks.map((b) => b.p50 * 1000)),
    p99: spread(blocks.map((b) => b.p99 * 1000)),
    rps: spread(blocks.map((b) => (b.completed / b.wallMs) * 1000)),
  }
}

function modeRatios(mine: readonly BlockFigures[], ref: readonly BlockFigures[]): ModeRatios {
  const per = (f: (b: BlockFigures) => number): number[] => mine.map((b, i) => f(b) / f(ref[i]!))
  const wallPerCall = (b: BlockFigures): number => b.wallMs / b.completed
  const cpuPerCall = (b: BlockFigures): number => b.cpuUs / b.completed
  return {
    wall: ratioStat(per(wallPerCall)),
    cpu: ratioStat(per(cpuPerCall)),
    p50: ratioStat(per((b) => b.p50)),
    rps: ratioStat(per((b) => 1 / wallPerCall(b))),
    extraCpuUs: spread(mine.map((b, i) => cpuPerCall(b) - cpuPerCall(ref[i]!))),
  }
}

/**
 * Runs `specs` each in its own process against `server`: specs[0] is the reference, specs[1] its
 * pair (ABBA half-blocks), any others follow the pair in each round and mode, in another order
 * each round (one block each, their ratios against the reference's merged block of that round).
 * Resolves with every contender's figures, the reference first.
 */
export async function pairedRun(
  server: ServerInfo,
  specs: readonly ProcessSpec[],
  config: PairedConfig,
  log: (line: string) => void,
  page = 'agents',
): Promise<PairedFigures[]> {
  const procs: ContenderProcess[] = []
  try {
    for (const spec of specs) procs.push(await ContenderProcess.start(spec, server, page))
    const connections = new Map<ContenderProcess, number>()
    for (const p of procs) connections.set(p, (await p.ask({ cmd: 'connections', calls: 100 })).sockets!)
    for (const [i, p] of procs.entries()) {
      if (specs[i]!.plant !== undefined) {
        const c = await p.ask({ cmd: 'calibrate', calls: config.warmUp })
        log(
          `  ${p.name}: planted ${c.plantedUs!.toFixed(2)} µs of busy work per call (${specs[i]!.plant} × ${c.cpuUsPerCall!.toFixed(1)} µs CPU per sequential call)`,
        )
      }
      await p.block(config.warmUp, 1)
      await p.block(config.warmUp, config.concurrency)
    }
    const [a, b, ...others] = procs as [ContenderProcess, ContenderProcess, ...ContenderProcess[]]
    const blocks = new Map<ContenderProcess, Record<Mode, BlockFigures[]>>(procs.map((p) => [p, { seq: [], con: [] }]))
    for (let round = 0; round < config.rounds; round++) {
      const started = performance.now()
      for (const mode of ['seq', 'con'] as const) {
        const count = mode === 'seq' ? config.sequential : config.concurrent
        const concurrency = mode === 'seq' ? 1 : config.concurrency
        const half = Math.ceil(count / 2)
        const [first, second] = round % 2 === 0 ? [a, b] : [b, a]
        const f1 = await first.block(half, concurrency)
        const s1 = await second.block(half, concurrency)
        const s2 = await second.block(half, concurrency)
        const f2 = await first.block(half, concurrency)
        blocks.get(first)![mode].push(merge(f1, f2))
        blocks.get(second)![mode].push(merge(s1, s2))
        for (const p of rotate(others, round)) blocks.get(p)![mode].push(await p.block(count, concurrency))
      }
      if (round === 0 || (round + 1) % 5 === 0 || round + 1 === config.rounds) {
        log(`  round ${round + 1}/${config.rounds}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
      }
    }
    const ref = blocks.get(a)!
    return procs.map((p, i) => {
      const r = blocks.get(p)!
      return {
        name: p.name,
        seq: modeFigures(r.seq),
        con: modeFigures(r.con),
        vs: i === 0 ? undefined : { seq: modeRatios(r.seq, ref.seq), con: modeRatios(r.con, ref.con) },
        connectionsPer100: connections.get(p)!,
        rounds: r,
      }
    })
  } finally {
    for (const p of procs) await p.stop()
  }
}
