// Child process of the allocation benchmark (started by bench/alloc.ts, never by hand): bytes
// allocated per call for one page of 100 messages, by the raw-undici floor, the SDK, the strict
// floor, and `JSON.parse` of the page's bytes alone. Prints one JSON line.
//
// Method: V8 cannot switch its GC off, but with a young generation far larger than a batch
// allocates (the parent starts this process with --min/--max-semi-space-size=128, i.e. 128 MB
// semi-spaces), no GC runs while a batch runs. So: full GC, read the heap, run `batch` sequential
// calls, read the heap again; the growth is what the calls allocated. Heap growth is
// v8.getHeapStatistics().used_heap_size (every V8 space: new, old, large objects, code), plus the
// growth of process.memoryUsage().arrayBuffers (Buffer/ArrayBuffer backing stores live outside the
// V8 heap: socket reads, Buffer.concat, text decoding). A PerformanceObserver counts 'gc' entries;
// a batch during which any GC ran is discarded and run again (at most 5 tries).
//   env BENCH_SERVER='{"url","keyId","keySecret","conversationId"}' BENCH_ROUNDS=N BENCH_BATCH=N BENCH_WARMUP=N
//       [BENCH_EXTRA=spec,spec: more contenders by bench/contenders.ts's names, e.g. sdk-at:DIR]
import { PerformanceObserver } from 'node:perf_hooks'
import v8 from 'node:v8'
import { contenderNamed, messagesPage, rawFloor, sdk, strictFloor, type Contender } from './contenders.ts'
import type { ServerInfo } from './fake.ts'
import { credentialsBody, floorAgent, floorGet } from './floor.ts'
import { rotate } from './lib.ts'

const server = JSON.parse(process.env['BENCH_SERVER'] ?? '') as ServerInfo
const rounds = Number(process.env['BENCH_ROUNDS'] ?? '5')
const batch = Number(process.env['BENCH_BATCH'] ?? '100')
const warmUp = Number(process.env['BENCH_WARMUP'] ?? '500')
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('alloc-client needs --expose-gc')

let gcs = 0
const observer = new PerformanceObserver((list) => {
  gcs += list.getEntries().length
})
observer.observe({ entryTypes: ['gc'] })
/** Lets pending PerformanceObserver callbacks run (they are delivered asynchronously). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve))
}

interface Sample {
  heap: number
  external: number
}

/** Bytes allocated per call of `fn` over `n` sequential calls, or undefined when a GC ran meanwhile. */
async function measure(fn: () => unknown, n: number): Promise<Sample | undefined> {
  gc!()
  gc!()
  await settle()
  gcs = 0
  const heap0 = v8.getHeapStatistics().used_heap_size
  const ext0 = process.memoryUsage().arrayBuffers
  for (let i = 0; i < n; i++) await fn()
  const heap1 = v8.getHeapStatistics().used_heap_size
  const ext1 = process.memoryUsage().arrayBuffers
  await settle()
  if (gcs > 0) return undefined
  return { heap: (heap1 - heap0) / n, external: (ext1 - ext0) / n }
}

const page = messagesPage(server)
// The page's bytes, for the JSON.parse-only reference.
const probe = floorAgent()
const text = JSON.stringify(await floorGet<unknown>(probe, server.url, page.path, credentialsBody(server)))
await probe.close()

const contenders: Contender[] = [
  rawFloor(server, page),
  sdk(server, page),
  strictFloor(server, page),
  {
    name: 'JSON.parse of the page alone',
    call: async () => (JSON.parse(text) as { data: unknown[] }).data.length,
    close: async () => undefined,
  },
]
for (const spec of (process.env['BENCH_EXTRA'] ?? '').split(',').filter((s) => s !== ''))
  contenders.push(await contenderNamed(spec, server, page))
const samples = new Map<string, Sample[]>(contenders.map((c) => [c.name, []]))
let discarded = 0
try {
  for (const c of contenders) {
    for (let i = 0; i < warmUp; i++) {
      const items = await c.call()
      if (items !== page.items) throw new Error(`${c.name}: expected ${page.items} items, got ${items}`)
    }
  }
  for (let round = 0; round < rounds; round++) {
    for (const c of rotate(contenders, round)) {
      let sample: Sample | undefined
      for (let attempt = 0; attempt < 5 && sample === undefined; attempt++) {
        sample = await measure(() => c.call(), batch)
        if (sample === undefined) discarded++
      }
      if (sample === undefined) throw new Error(`${c.name}: a GC ran during every one of 5 batches; raise the semi-space size`)
      samples.get(c.name)!.push(sample)
    }
  }
} finally {
  observer.disconnect()
  for (const c of contenders) await c.close()
}
process.stdout.write(`${JSON.stringify({ pageBytes: Buffer.byteLength(text), batch, discarded, samples: Object.fromEntries(samples) })}\n`)
