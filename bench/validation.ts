// How to check a response without zod's throw-away copy (issue 22, "Allocation"): bytes allocated
// and time per check of one page, for each way zod 4 can check a body, with the SDK's own schemas
// (imported from src/ through Node's type stripping, like bench/schema.ts: they are internal):
// - `safeParse`: zod's runtime parser with its JIT fast path; builds a full copy of the page (0.2);
// - `safeParse(…, { jitless: true })`: the runtime parser without generated code (what zod does under a CSP);
// - `validate`: zod's type guard on the plain schema (the runtime parser, abortEarly; still builds the copy inside);
// - `z.compile(schema).safeParse`: the ahead-of-time compiled parser (still builds a copy, a leaner one);
// - `z.compile(schema).validate`: the compiled validator, which only checks (what checkBody uses since 0.3);
// - a hand-written check of the messages page (typeof per field; the lower bound of any check).
// Pages are the fake's (the built testing kit, in a child process), read once over raw undici.
// Bytes: growth of V8's used heap over a batch of checks run with 128 MB semi-spaces (no GC inside
// a batch; a batch with a GC is discarded and run again), per check. Time: mean µs per check over
// a batch; median (min–max) over rounds, modes rotated. It reports; it never fails on a figure.
//   npm run bench:validation
import os from 'node:os'
import { PerformanceObserver } from 'node:perf_hooks'
import v8 from 'node:v8'
import * as z from 'zod'
import { agentSchema } from '../src/schemas/agent.ts'
import { paginationSchema } from '../src/schemas/common.ts'
import { customerUserSchema } from '../src/schemas/customer-user.ts'
import { messageConversationSchema, messageSchema } from '../src/schemas/message.ts'
import { spawnFake } from './fake.ts'
import { credentialsBody, floorAgent, floorGet } from './floor.ts'
import { collectGarbage, fmtSpread, machineInfo, rotate, spread, table, type Spread } from './lib.ts'

const ROUNDS = 7
const BATCH = 200
const TIMED = 2_000
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with --expose-gc and 128 MB semi-spaces (npm run bench:validation does)')
const out = (line = ''): void => void process.stdout.write(`${line}\n`)

let gcs = 0
const observer = new PerformanceObserver((list) => {
  gcs += list.getEntries().length
})
observer.observe({ entryTypes: ['gc'] })
const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve))
}

/** Bytes allocated per call of `fn` over a GC-free batch. */
async function bytesPerCall(fn: () => unknown): Promise<number> {
  for (let attempt = 0; attempt < 5; attempt++) {
    collectGarbage()
    await settle()
    gcs = 0
    const before = v8.getHeapStatistics().used_heap_size
    for (let i = 0; i < BATCH; i++) fn()
    const after = v8.getHeapStatistics().used_heap_size
    await settle()
    if (gcs === 0) return (after - before) / BATCH
  }
  throw new Error('a GC ran in every batch: raise the semi-space size')
}

function usPerCall(fn: () => unknown): number {
  const started = performance.now()
  for (let i = 0; i < TIMED; i++) fn()
  return ((performance.now() - started) / TIMED) * 1000
}

/** The lower bound: the messages page checked by hand, field by field, nothing allocated. */
function handCheckMessages(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false
  const { data, pagination, conversation } = body as Record<string, unknown>
  if (!Array.isArray(data) || typeof pagination !== 'object' || pagination === null) return false
  const p = pagination as Record<string, unknown>
  for (const [key, min] of [
    ['page', 1],
    ['limit', 1],
    ['total', 0],
    ['total_pages', 0],
  ] as const) {
    const v = p[key]
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) return false
  }
  if (typeof conversation !== 'object' || conversation === null) return false
  const c = conversation as Record<string, unknown>
  if (typeof c['id'] !== 'string' || typeof c['title'] !== 'string') return false
  for (const m of data as unknown[]) {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return false
    const r = m as Record<string, unknown>
    if (
      typeof r['id'] !== 'string' ||
      typeof r['content'] !== 'string' ||
      typeof r['role'] !== 'string' ||
      typeof r['conversation_id'] !== 'string' ||
      typeof r['created_at'] !== 'string'
    )
      return false
  }
  return true
}

const machine = machineInfo()
out('# Checking a response without a copy: zod 4 validation modes')
out()
out(
  `Node ${machine.node}, os.availableParallelism() = ${machine.parallelism}, ${machine.cpu}, ${machine.platform}; zod ${z.core.version.major}.${z.core.version.minor}.${z.core.version.patch}`,
)
out(
  `Load average at start: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`,
)

const server = await spawnFake(['--agents', '20', '--customer-users', '100', '--conversations', '1', '--messages', '100'])
const agentPool = floorAgent()
const read = (path: string): Promise<unknown> => floorGet<unknown>(agentPool, server.url, path, credentialsBody(server))
const page = (item: z.ZodType, extra: z.ZodRawShape = {}): z.ZodType =>
  // As defineList builds it (src/pagination/list.ts).
  z.looseObject({ data: z.array(item), pagination: paginationSchema(), ...extra })
const cases = [
  {
    name: '100 messages',
    schema: page(messageSchema(), { conversation: messageConversationSchema() }),
    body: await read(`/rest/v1/conversations/${encodeURIComponent(server.conversationId)}/messages?page=1&limit=100`),
    hand: handCheckMessages,
  },
  {
    name: '100 customer users',
    schema: page(customerUserSchema()),
    body: await read('/rest/v1/customer-users?page=1&limit=100'),
    hand: undefined,
  },
  { name: '20 agents', schema: page(agentSchema()), body: await read('/rest/v1/agents?page=1&limit=20'), hand: undefined },
]
await agentPool.close()
await server.stop()

interface Row {
  page: string
  mode: string
  bytes: Spread
  us: Spread
  compileMs?: number
}
const rows: Row[] = []
try {
  for (const c of cases) {
    const started = performance.now()
    const compiled = z.compile(c.schema, { strict: true })
    const compileMs = performance.now() - started
    const modes: [string, () => boolean][] = [
      ['safeParse (0.2: builds a copy)', () => c.schema.safeParse(c.body).success],
      ['safeParse, jitless', () => c.schema.safeParse(c.body, { jitless: true }).success],
      ['validate (runtime)', () => c.schema.validate(c.body)],
      ['z.compile(schema).safeParse', () => compiled.safeParse(c.body).success],
      ['z.compile(schema).validate (0.3)', () => compiled.validate(c.body)],
    ]
    if (c.hand !== undefined) modes.push(['hand-written typeof checks (lower bound)', () => c.hand(c.body)])
    for (const [mode, fn] of modes) {
      if (!fn()) throw new Error(`${c.name}: ${mode} refuses the fake's page`)
      for (let i = 0; i < 1_000; i++) fn() // JIT warm-up
    }
    const bytes = new Map<string, number[]>(modes.map(([m]) => [m, []]))
    const us = new Map<string, number[]>(modes.map(([m]) => [m, []]))
    for (let round = 0; round < ROUNDS; round++) {
      for (const [mode, fn] of rotate(modes, round)) {
        bytes.get(mode)!.push(await bytesPerCall(fn))
        collectGarbage()
        us.get(mode)!.push(usPerCall(fn))
      }
    }
    for (const [mode] of modes) {
      rows.push({
        page: c.name,
        mode,
        bytes: spread(bytes.get(mode)!),
        us: spread(us.get(mode)!),
        ...(mode.startsWith('z.compile(schema).validate') ? { compileMs } : {}),
      })
    }
  }
} finally {
  observer.disconnect()
}

out()
out(`${ROUNDS} rounds; bytes per check over GC-free batches of ${BATCH}, µs per check over ${TIMED} checks; median (min–max).`)
out()
out(
  table(
    ['page', 'mode', 'bytes allocated / check', 'µs / check', 'vs safeParse: bytes, µs'],
    rows.map((r) => {
      const base = rows.find((b) => b.page === r.page && b.mode.startsWith('safeParse (0.2'))!
      const ratio = (a: Spread, b: Spread): string => `${fmtSpread(spread(a.values.map((v, i) => v / b.values[i]!)), 2)}×`
      return [
        r.page,
        r.mode + (r.compileMs === undefined ? '' : ` (compiled once in ${r.compileMs.toFixed(1)} ms)`),
        fmtSpread(r.bytes, 0),
        fmtSpread(r.us, 1),
        r === base ? '1, 1' : `${ratio(r.bytes, base.bytes)}, ${ratio(r.us, base.us)}`,
      ]
    }),
  ),
)
out()
out(
  `Load average at end: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`,
)
