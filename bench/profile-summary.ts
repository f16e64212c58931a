// Summarises a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time, and
// the inclusive (self + callees) time of the top functions, as shares of the profiled time.
//   npx node bench/profile-summary.ts <file.cpuprofile> [--top 25] [--match transport,zod]
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
}
interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, match: { type: 'string' } },
})
const file = positionals[0]
if (file === undefined) throw new Error('usage: profile-summary.ts <file.cpuprofile> [--top N] [--match a,b]')
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile

const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)

const selfUs = new Map<number, number>()
for (let i = 0; i < profile.samples.length; i++)
  selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0))
const total = [...selfUs.values()].reduce((a, b) => a + b, 0)

const shortUrl = (url: string): string =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '~/')
    .replace(/^.*\/main\//, '')
const key = (f: CallFrame): string => `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`

// Self time per function; inclusive time per function (each sample counted once per function on its stack).
const self = new Map<string, number>()
const inclusive = new Map<string, number>()
for (const [id, us] of selfUs) {
  const node = byId.get(id)!
  self.set(key(node.callFrame), (self.get(key(node.callFrame)) ?? 0) + us)
  const seen = new Set<string>()
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const k = key(byId.get(cur)!.callFrame)
    if (seen.has(k)) continue
    seen.add(k)
    inclusive.set(k, (inclusive.get(k) ?? 0) + us)
  }
}
const pct = (us: number): string => `${((us / total) * 100).toFixed(1).padStart(5)} %`
const top = Number(values.top)
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`)
console.log(`\nself time, top ${top}:`)
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`)
const matches = (values.match ?? '').split(',').filter((m) => m !== '')
const incl = [...inclusive].filter(([k]) => matches.length === 0 || matches.some((m) => k.includes(m))).sort((a, b) => b[1] - a[1])
console.log(`\ninclusive time${matches.length > 0 ? ` (matching ${matches.join(', ')})` : ''}, top ${top}:`)
for (const [k, us] of incl.slice(0, top)) console.log(`${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`)
