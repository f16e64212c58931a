// Allocation per 100-message page, standalone (`npm run bench:alloc`; the same section as
// `npm run bench -- --only alloc`, without the rest of the suite): bytes allocated per call by the
// SDK's `conversations.messages.list` (one page of 100 messages) against the fair floor (raw undici
// with the SDK's pool settings, `body.json()`), the strict floor and `JSON.parse` alone. Method:
// bench/alloc-client.ts (GC-free batches in a child process with 128 MB semi-spaces). A byte
// count, not a time: the load of the machine does not move it (see BENCHMARKS.md, "Allocation").
//
//   npm run bench:alloc                                  9 rounds of 200 calls per contender
//   npm run bench:alloc -- --rounds 15 --baseline .bench-out/baseline-<commit>   adds an older build
import os from 'node:os'
import { parseArgs } from 'node:util'
import { allocation } from './alloc.ts'
import { spawnFake } from './fake.ts'
import { fmtRatio, fmtSpread, table } from './lib.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '9' },
    batch: { type: 'string', default: '200' },
    'warm-up': { type: 'string', default: '1000' },
    baseline: { type: 'string', multiple: true, default: [] },
  },
})
const out = (line = ''): void => void process.stdout.write(`${line}\n`)
const loadavg = (): string => os.loadavg()[0]!.toFixed(2)

const load0 = loadavg()
const server = await spawnFake(['--agents', '20', '--customer-users', '100', '--conversations', '1', '--messages', '200'])
try {
  const a = await allocation(server, {
    rounds: Number(values.rounds),
    batch: Number(values.batch),
    warmUp: Number(values['warm-up']),
    budgetMs: 600_000,
    extra: values.baseline.map((dir) => `sdk-at:${dir}`),
  })
  out(`## Allocation: bytes allocated per call, one page of 100 messages (${a.pageBytes.toLocaleString('en-US')} bytes of JSON)`)
  out(
    `${values.rounds} rounds × ${a.batch} sequential calls per contender, rotated; batches discarded because a GC ran: ${a.discarded}; load ${load0} → ${loadavg()}. Median (min–max); the ratio also as a geometric mean [95 % CI] over rounds.`,
  )
  out()
  out(
    table(
      ['contender', 'V8 heap bytes/call', 'ArrayBuffer bytes/call', 'total bytes/call', 'total / floor', 'total / floor, mean [95 % CI]'],
      a.figures.map((f) => [
        f.name,
        fmtSpread(f.heap, 0),
        fmtSpread(f.external, 0),
        fmtSpread(f.total, 0),
        `${fmtSpread(f.vsFloor, 3)}×`,
        fmtRatio(f.vsFloorStat),
      ]),
    ),
  )
} finally {
  await server.stop()
}
