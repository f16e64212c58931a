// Child process: ONE contender of the per-call comparison (bench/paired.ts starts it; never by
// hand). Each contender runs in a process of its own, so that nothing one does shapes the other's
// timings: undici's functions (which the floor and the SDK both call) get their own inline caches
// and optimised code, each has its own heap and GC, and a contender loaded from an earlier build
// (`sdk-at:DIR`) runs its own copy of everything. Commands arrive as JSON lines on stdin; each gets
// one JSON line on stdout:
//   {"cmd":"block","calls":N,"concurrency":C}   → {"wallMs","cpuUs","p50","p99","completed"}
//   {"cmd":"connections","calls":N}             → {"sockets"}  new TCP connections over N sequential calls
//   {"cmd":"calibrate","calls":N}                → {"cpuUsPerCall","plantedUs"}  (with --plant only)
// It exits when stdin closes. Garbage is collected before every block (started with --expose-gc).
//   node --expose-gc bench/contender-process.ts --contender floor|sdk|strict|axios|old-floor|sdk-at:DIR
//        --server JSON [--page agents|messages] [--plant FRACTION]
//
// --plant F (method check): after each call, a busy loop worth F of the contender's own CPU per
// call (measured by `calibrate`, sequentially), so a run against the same contender unplanted
// shows whether a slowdown of that size is seen.
import diagnostics from 'node:diagnostics_channel'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { agentsPage, contenderNamed, messagesPage, type Contender } from './contenders.ts'
import type { ServerInfo } from './fake.ts'
import { collectGarbage, percentile } from './lib.ts'

const { values } = parseArgs({
  options: {
    contender: { type: 'string' },
    server: { type: 'string' },
    page: { type: 'string', default: 'agents' },
    plant: { type: 'string' },
  },
})
const server = JSON.parse(values.server ?? '') as ServerInfo
const page = values.page === 'messages' ? messagesPage(server) : agentsPage()

const inner = await contenderNamed(values.contender ?? '', server, page)
const plant = values.plant === undefined ? 0 : Number(values.plant)
/** Iterations of {@link spin} after each call (set by `calibrate`). */
let spins = 0
let sink = 0
/** Integer work the JIT cannot drop (its result is kept); ~1 ns an iteration. */
function spin(n: number): void {
  let x = sink | 0
  for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0
  sink = x
}
const contender: Contender =
  plant === 0
    ? inner
    : {
        name: inner.name,
        async call() {
          const n = await inner.call()
          spin(spins)
          return n
        },
        close: () => inner.close(),
      }

/** Runs `count` calls with `concurrency` in flight; each must return the page's item count. */
async function block(count: number, concurrency: number): Promise<Record<string, number>> {
  collectGarbage()
  const latencies = new Float64Array(count)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++
      const started = performance.now()
      const got = await contender.call()
      latencies[i] = performance.now() - started
      if (got !== page.items) throw new Error(`${contender.name}: expected ${page.items} items, got ${got}`)
    }
  }
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  const wallMs = performance.now() - started
  const used = process.cpuUsage(cpu)
  const sortedLatencies = Array.from(latencies)
  return {
    wallMs,
    cpuUs: used.user + used.system,
    p50: percentile(sortedLatencies, 50),
    p99: percentile(sortedLatencies, 99),
    completed: count,
  }
}

async function connections(calls: number): Promise<number> {
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

async function calibrate(calls: number): Promise<Record<string, number>> {
  spins = 0
  const measured = await block(calls, 1)
  const cpuUsPerCall = measured.cpuUs! / calls
  // Iterations per µs of this machine, over a loop long enough to time.
  const probe = 20_000_000
  const cpu = process.cpuUsage()
  spin(probe)
  const used = process.cpuUsage(cpu)
  const perUs = probe / (used.user + used.system)
  spins = Math.round(plant * cpuUsPerCall * perUs)
  return { cpuUsPerCall, plantedUs: spins / perUs, spins }
}

const lines = createInterface({ input: process.stdin })
process.stdout.write(`${JSON.stringify({ ready: true, name: contender.name })}\n`)
try {
  for await (const line of lines) {
    const command = JSON.parse(line) as { cmd: string; calls: number; concurrency?: number }
    let answer: Record<string, number>
    if (command.cmd === 'block') answer = await block(command.calls, command.concurrency ?? 1)
    else if (command.cmd === 'connections') answer = { sockets: await connections(command.calls) }
    else if (command.cmd === 'calibrate') answer = await calibrate(command.calls)
    else throw new Error(`unknown command ${command.cmd}`)
    process.stdout.write(`${JSON.stringify(answer)}\n`)
  }
} finally {
  await contender.close()
}
