// Where two callgrind segments differ, function by function (issue 32): each segment's exclusive
// instruction counts (`callgrind_annotate`), per call, JIT-compiled functions named from V8's map
// of them (`npm run bench:instructions -- --keep DIR --perf-map` writes `perf.map` beside each run's
// dumps; callgrind itself names JIT code only by address). Names lose their line numbers, so that
// two builds of the bundle compare function by function. GC and JIT compiling are not left out.
//
//   node bench/instructions-attribute.ts --a DIR_A/callgrind.out.3 --b DIR_B/callgrind.out.3 [--calls 400] [--top 60] [--match RE]
// Each dump's perf.map is read from its own directory when there is one. Prints B − A per call.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    calls: { type: 'string', default: '400' },
    top: { type: 'string', default: '60' },
    match: { type: 'string' },
  },
})
if (values.a === undefined || values.b === undefined) throw new Error('usage: --a DUMP --b DUMP [--calls N] [--top N] [--match RE]')

/** A JIT map: code start, size and name, sorted by start. */
type JitMap = { start: number; end: number; name: string }[]

function jitMap(dump: string): JitMap | undefined {
  const file = join(dirname(dump), 'perf.map')
  if (!existsSync(file)) return undefined
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ start: parseInt(m[1]!, 16), end: parseInt(m[1]!, 16) + parseInt(m[2]!, 16), name: m[3]! }))
    .sort((x, y) => x.start - y.start)
}

/** The map's name for the code at `address` (a later entry wins: V8 reuses code space). */
function nameAt(map: JitMap, address: number): string | undefined {
  let lo = 0
  let hi = map.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (map[mid]!.start <= address) lo = mid + 1
    else hi = mid - 1
  }
  for (let i = hi; i >= 0 && i > hi - 50; i--) if (address < map[i]!.end) return map[i]!.name
  return undefined
}

/** Exclusive instructions per function of one dump. */
function counts(dump: string): Map<string, number> {
  const map = jitMap(dump)
  const out = execFileSync('callgrind_annotate', ['--threshold=100', '--inclusive=no', dump], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  })
  const result = new Map<string, number>()
  for (const line of out.split('\n')) {
    const m = /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$/.exec(line)
    if (m === null) continue
    let name = m[2]!.replace(/^\?\?\?:/, '').replace(/\s*\[\/[^\]]*\]$/, '')
    if (name.startsWith('PROGRAM TOTALS')) name = 'TOTAL'
    const jit = /^0x([0-9a-f]+)('\d+)? \[\?\?\?\]$/.exec(name)
    if (jit !== null) {
      const named = map === undefined ? undefined : nameAt(map, parseInt(jit[1]!, 16))
      name = `JIT ${named === undefined ? '(unnamed)' : named.replace(/file:\/\/\S*?\/(dist|bench|node_modules)\//, '$1/').replace(/:\d+:\d+$/, '')}`
    }
    result.set(name, (result.get(name) ?? 0) + Number(m[1]!.replaceAll(',', '')))
  }
  return result
}

const calls = Number(values.calls)
const a = counts(values.a)
const b = counts(values.b)
const match = values.match === undefined ? undefined : new RegExp(values.match)
// The frames below the event loop carry the whole segment (the dump is taken inside them): only TOTAL is kept of them.
const whole = (name: string): boolean => name !== 'TOTAL' && a.get(name) === a.get('TOTAL') && b.get(name) === b.get('TOTAL')
const rows = [...new Set([...a.keys(), ...b.keys()])]
  .filter((name) => !whole(name) && (match === undefined || match.test(name)))
  .map((name) => ({ name, a: (a.get(name) ?? 0) / calls, b: (b.get(name) ?? 0) / calls }))
  .sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a))
  .slice(0, Number(values.top))
const int = (n: number): string => Math.round(n).toLocaleString('en-US').padStart(9)
console.log(`${'B − A'.padStart(9)} ${'A'.padStart(9)} ${'B'.padStart(9)}  function (instructions per call, exclusive)`)
for (const row of rows) console.log(`${int(row.b - row.a)} ${int(row.a)} ${int(row.b)}  ${row.name.slice(0, 160)}`)
