// Profiling entry (`npm run bench:profile`): runs ONE contender for N seconds against a server in a
// child process, with V8's CPU profiler (what `node --cpu-prof` uses) and optionally its sampling
// heap profiler (what `node --heap-prof` uses) switched on through node:inspector AFTER a warm-up,
// so start-up and JIT warm-up stay out of the profile. Writes the .cpuprofile / .heapprofile under
// bench/results/profiles/ (open them in Chrome DevTools or speedscope) and prints the top self-time
// functions, SDK code mapped back to src/ (bench/profile-summary.ts).
//   npm run bench:profile                                          SDK, 32 in flight, agents page, 10 s
//   npm run bench:profile -- --contender floor --page messages --seconds 20 --heap
//   npm run bench:profile -- --export listall --concurrency 16     whole-company export, repeated for N s
// --contender: sdk | floor | axios | old-floor (per-request); --export: listall | pool | nested;
// --encoding identity | gzip | br | zstd (what the raw pool asks for; the SDK negotiates its own).
import { mkdirSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { parseArgs } from 'node:util'
import { agentsPage, axiosClient, messagesPage, oldFloor, rawFloor, sdk, type Contender } from './contenders.ts'
import { listAll, nestedLoop, rawPool, type ExportContender } from './export/contenders.ts'
import { spawnExportServer } from './export/control.ts'
import { ENCODINGS, type Encoding } from './export/server.ts'
import { spawnFake } from './fake.ts'
import { summarizeCpuProfile, summarizeHeapProfile } from './profile-summary.ts'

const { values } = parseArgs({
  options: {
    contender: { type: 'string', default: 'sdk' },
    page: { type: 'string', default: 'agents' },
    export: { type: 'string' },
    encoding: { type: 'string' },
    concurrency: { type: 'string' },
    seconds: { type: 'string', default: '10' },
    'warm-up-seconds': { type: 'string', default: '3' },
    'latency-ms': { type: 'string', default: '0' },
    'interval-us': { type: 'string', default: '250' },
    heap: { type: 'boolean', default: false },
    top: { type: 'string', default: '25' },
    match: { type: 'string', default: '' },
  },
})
const seconds = Number(values.seconds)
const warmUpSeconds = Number(values['warm-up-seconds'])

/** Runs `step` back to back with `concurrency` in flight until `ms` have passed; resolves with the steps done. */
async function runFor(ms: number, concurrency: number, step: () => Promise<unknown>): Promise<number> {
  const end = performance.now() + ms
  let done = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await step()
        done++
      }
    }),
  )
  return done
}

interface Workload {
  label: string
  concurrency: number
  /** One unit of work and what it is called ("calls", "exports"). */
  step: () => Promise<unknown>
  unit: string
  /** Units per step (messages per export), for the rate line. */
  perStep: number
  close(): Promise<void>
}

async function workload(): Promise<Workload> {
  if (values.export !== undefined) {
    const concurrency = Number(values.concurrency ?? '16')
    const encoding = (values.encoding ?? 'identity') as Encoding
    if (!ENCODINGS.includes(encoding)) throw new Error(`--encoding must be one of ${ENCODINGS.join(', ')}`)
    const server = await spawnExportServer({ conversations: 2_000, messages: 200_000, latencyMs: 5, linkMbps: 50, linkRttMs: 20 })
    const target = { baseUrl: server.url, keyId: server.keyId, keySecret: server.keySecret, expected: server.expected }
    const makers: Record<string, () => ExportContender> = {
      listall: () => listAll(target, `SDK listAll @${concurrency}`, concurrency),
      pool: () => rawPool(target, `raw undici pool @${concurrency}, ${encoding}`, concurrency, encoding),
      nested: () => nestedLoop(target, 'SDK nested loop'),
    }
    const make = makers[values.export]
    if (make === undefined) throw new Error(`--export must be one of ${Object.keys(makers).join(', ')}`)
    const contender = make()
    return {
      label: `${contender.name}, whole-company export (${server.expected.messages} messages, 5 ms server)`,
      concurrency: 1,
      step: () => contender.run(600_000),
      unit: 'messages',
      perStep: server.expected.messages,
      close: async () => {
        await contender.close()
        await server.stop()
      },
    }
  }
  const concurrency = Number(values.concurrency ?? '32')
  const server = await spawnFake(['--agents', '20', '--conversations', '1', '--messages', '200', '--latency-ms', values['latency-ms']])
  const page = values.page === 'messages' ? messagesPage(server) : agentsPage()
  const makers: Record<string, () => Contender> = {
    sdk: () => sdk(server, page),
    floor: () => rawFloor(server, page),
    axios: () => axiosClient(server),
    'old-floor': () => oldFloor(server, page),
  }
  const make = makers[values.contender]
  if (make === undefined) throw new Error(`--contender must be one of ${Object.keys(makers).join(', ')}`)
  const contender = make()
  return {
    label: `${contender.name}, ${values.contender === 'axios' ? '20 agents' : page.label} per call, ${concurrency} in flight`,
    concurrency,
    step: () => contender.call(),
    unit: 'calls',
    perStep: 1,
    close: async () => {
      await contender.close()
      await server.stop()
    },
  }
}

const work = await workload()
const dir = new URL('./results/profiles/', import.meta.url).pathname
mkdirSync(dir, { recursive: true })
const base = `${dir}${(values.export ?? `${values.contender}-${values.page}`).replace(/[^a-z0-9-]/gi, '')}-${new Date().toISOString().replace(/[:.]/g, '-')}`
const session = new Session()
session.connect()
try {
  console.log(`profiling: ${work.label}; warm-up ${warmUpSeconds} s, then ${seconds} s profiled`)
  await runFor(warmUpSeconds * 1000, work.concurrency, work.step)
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: Number(values['interval-us']) })
  if (values.heap) {
    await session.post('HeapProfiler.enable')
    // Sampled allocations, collected ones included (by default V8 reports only what is still alive
    // when sampling stops, which hides the short-lived garbage a request makes).
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 8_192,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    })
  }
  await session.post('Profiler.start')
  const cpu = process.cpuUsage()
  const started = performance.now()
  const steps = await runFor(seconds * 1000, work.concurrency, work.step)
  const wall = performance.now() - started
  const used = process.cpuUsage(cpu)
  const { profile } = await session.post('Profiler.stop')
  writeFileSync(`${base}.cpuprofile`, JSON.stringify(profile))
  const files = [`${base}.cpuprofile`]
  if (values.heap) {
    const heap = await session.post('HeapProfiler.stopSampling')
    writeFileSync(`${base}.heapprofile`, JSON.stringify(heap.profile))
    files.push(`${base}.heapprofile`)
  }
  const units = steps * work.perStep
  console.log(
    `${units} ${work.unit} in ${(wall / 1000).toFixed(1)} s: ${((units / wall) * 1000).toFixed(0)} ${work.unit}/s; ` +
      `client CPU ${(((used.user + used.system) / 1000 / wall) * 100).toFixed(0)} % of one core, ${((used.user + used.system) / units).toFixed(1)} µs per ${work.unit.replace(/s$/, '')} (profiler overhead included)`,
  )
  const options = { top: Number(values.top), match: values.match.split(',').filter((m) => m !== '') }
  for (const file of files) {
    console.log()
    console.log(file.endsWith('.heapprofile') ? summarizeHeapProfile(file, options) : summarizeCpuProfile(file, options))
  }
} finally {
  session.disconnect()
  await work.close()
}
