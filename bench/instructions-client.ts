// Child process of the instruction-count benchmark (bench/instructions.ts runs it under callgrind;
// never by hand): ONE contender makes `--warm-up` calls, then `--segments` segments of `--calls`
// calls each with `--concurrency` in flight, checking every answer. Each segment is framed by two
// calls of `os.freemem()` (libuv's `uv_get_free_memory`, which nothing else here calls): callgrind,
// told to dump its counters before that function, then writes one count per segment. No GC is
// forced anywhere: a full GC clears the weak references optimised code depends on, and V8 then
// deoptimises that code and compiles it again (a forced GC after the warm-up made the next three
// segments pay for recompiling most of the hot path).
//   node --single-threaded bench/instructions-client.ts --contender sdk --server JSON
//        --warm-up N --calls N --segments K [--concurrency N] [--page agents|messages] [--plant-spins N]
import os from 'node:os'
import { parseArgs } from 'node:util'
import { agentsPage, contenderNamed, messagesPage } from './contenders.ts'
import type { ServerInfo } from './fake.ts'

const { values } = parseArgs({
  options: {
    contender: { type: 'string' },
    server: { type: 'string' },
    page: { type: 'string', default: 'agents' },
    'warm-up': { type: 'string', default: '2000' },
    calls: { type: 'string', default: '500' },
    segments: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '1' },
    'plant-spins': { type: 'string', default: '0' },
  },
})
const server = JSON.parse(values.server ?? '') as ServerInfo
const page = values.page === 'messages' ? messagesPage(server) : agentsPage()
const contender = await contenderNamed(values.contender ?? '', server, page)
const spins = Number(values['plant-spins'])
let sink = 0
/** A known amount of integer work per call (a planted slowdown, to check the method sees it). */
function spin(n: number): void {
  let x = sink | 0
  for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0
  sink = x
}

async function run(count: number, concurrency: number): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++
      const got = await contender.call()
      if (spins > 0) spin(spins)
      if (got !== page.items) throw new Error(`${contender.name}: expected ${page.items} items, got ${got}`)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}

const concurrency = Number(values.concurrency)
/** A segment boundary: callgrind dumps its counters here (--dump-before=uv_get_free_memory). */
const mark = (): number => os.freemem()
try {
  // The warm-up in the mode measured: the JIT's work and the pool's connections are done by then.
  await run(Number(values['warm-up']), concurrency)
  mark()
  for (let k = 0; k < Number(values.segments); k++) {
    await run(Number(values.calls), concurrency)
    mark()
  }
} finally {
  await contender.close()
}
process.stdout.write(`${JSON.stringify({ sink: sink & 1 })}\n`)
