// Summarises V8 profiles: a .cpuprofile (node --cpu-prof, or bench/profile.ts) as the functions
// with the most self time and the inclusive time of the top functions; a .heapprofile
// (node --heap-prof, or bench/profile.ts --heap) as the allocation sites with the most sampled
// bytes. Locations in the built package (dist/*.js) are mapped back to src/*.ts through the
// source maps tsup writes, so the lead sees src/internal/transport.ts:123, not dist/index.js:1234.
//   npx node bench/profile-summary.ts <file.cpuprofile|file.heapprofile> [--top 25] [--match transport,zod]
import { readFileSync, existsSync } from 'node:fs'
import { SourceMap, type SourceMapPayload } from 'node:module'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
  columnNumber: number
}
interface CpuNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}
interface CpuProfile {
  nodes: CpuNode[]
  samples: number[]
  timeDeltas: number[]
}
interface HeapNode {
  callFrame: CallFrame
  selfSize: number
  children: HeapNode[]
}
interface HeapProfile {
  head: HeapNode
}

export interface SummaryOptions {
  top: number
  /** Substrings of a location: the inclusive table keeps only functions that contain one. */
  match: readonly string[]
}

const maps = new Map<string, SourceMap | undefined>()
function sourceMapOf(url: string): SourceMap | undefined {
  if (!maps.has(url)) {
    let map: SourceMap | undefined
    try {
      const file = `${fileURLToPath(url)}.map`
      if (url.startsWith('file://') && url.endsWith('.js') && existsSync(file))
        map = new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as SourceMapPayload)
    } catch {
      map = undefined
    }
    maps.set(url, map)
  }
  return maps.get(url)
}

/** `name file:line`, with built-package locations mapped to their TypeScript source. */
function locate(f: CallFrame): string {
  const name = f.functionName || '(anonymous)'
  const entry = sourceMapOf(f.url)?.findEntry(f.lineNumber, f.columnNumber)
  if (entry !== undefined && 'originalSource' in entry) return `${name} ${shorten(entry.originalSource)}:${entry.originalLine + 1}`
  return `${name} ${shorten(f.url)}:${f.lineNumber + 1}`
}

function shorten(url: string): string {
  return url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '~/')
    .replace(/^(\.\.\/)+/, '')
    .replace(/^.*\/(src|bench|dist)\//, '$1/')
}

const pct = (part: number, total: number): string => `${((part / total) * 100).toFixed(1).padStart(5)} %`

/** Self and inclusive time per function of a .cpuprofile, as text. */
export function summarizeCpuProfile(file: string, options: SummaryOptions): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const selfUs = new Map<number, number>()
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
  const sampled = [...selfUs.values()].reduce((a, b) => a + b, 0)
  // Samples of the profiler's own work (bench/profile.ts stopping it through node:inspector) are left out.
  const inProfiler = (id: number): boolean => {
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur))
      if (byId.get(cur)!.callFrame.url === 'node:inspector') return true
    return false
  }
  for (const id of [...selfUs.keys()]) if (inProfiler(id)) selfUs.delete(id)
  const idle = [...selfUs].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, us]) => a + us, 0)
  // Shares are of the busy time: a client waiting on its server is idle, and idle is not a cost.
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0) - idle
  const keys = new Map<number, string>()
  const key = (id: number): string => {
    let k = keys.get(id)
    if (k === undefined) keys.set(id, (k = locate(byId.get(id)!.callFrame)))
    return k
  }
  // Self time per function; inclusive time per function (each sample counted once per function on its stack).
  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  for (const [id, us] of selfUs) {
    self.set(key(id), (self.get(key(id)) ?? 0) + us)
    const seen = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = key(cur)
      if (seen.has(k)) continue
      seen.add(k)
      inclusive.set(k, (inclusive.get(k) ?? 0) + us)
    }
  }
  const line = ([k, us]: [string, number]): string => `${pct(us, total)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`
  const sorted = (m: Map<string, number>): [string, number][] => [...m].sort((a, b) => b[1] - a[1])
  const isSdk = (k: string): boolean => k.includes(' src/')
  const out = [
    `${file}: ${(sampled / 1000).toFixed(0)} ms sampled, of which ${(idle / 1000).toFixed(0)} ms idle and ${((sampled - idle - total) / 1000).toFixed(0)} ms the profiler's own; shares below are of the ${(total / 1000).toFixed(0)} ms busy`,
    '',
    `self time, top ${options.top}:`,
  ]
  out.push(
    ...sorted(self)
      .filter(([k]) => !k.startsWith('(idle)'))
      .slice(0, options.top)
      .map(line),
  )
  out.push('', `self time in the SDK's own code (src/), top ${options.top}:`)
  out.push(
    ...sorted(self)
      .filter(([k]) => isSdk(k))
      .slice(0, options.top)
      .map(line),
  )
  const sdkSelf = sorted(self)
    .filter(([k]) => isSdk(k))
    .reduce((a, [, us]) => a + us, 0)
  out.push(`(the SDK's own functions: ${pct(sdkSelf, total).trim()} of busy time as self time)`)
  const match = options.match
  const incl = sorted(inclusive).filter(([k]) => (match.length === 0 ? isSdk(k) : match.some((m) => k.includes(m))))
  out.push('', `inclusive time${match.length > 0 ? ` (matching ${match.join(', ')})` : ' (SDK functions)'}, top ${options.top}:`)
  out.push(...incl.slice(0, options.top).map(line))
  return out.join('\n')
}

/** Sampled bytes allocated per function of a .heapprofile, as text. */
export function summarizeHeapProfile(file: string, options: SummaryOptions): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as HeapProfile
  const self = new Map<string, number>()
  const walk = (node: HeapNode): void => {
    if (node.selfSize > 0) self.set(locate(node.callFrame), (self.get(locate(node.callFrame)) ?? 0) + node.selfSize)
    for (const child of node.children) walk(child)
  }
  walk(profile.head)
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  const line = ([k, bytes]: [string, number]): string => `${pct(bytes, total)}  ${(bytes / 1024 ** 2).toFixed(1).padStart(7)} MB  ${k}`
  const sorted = [...self].sort((a, b) => b[1] - a[1])
  return [
    `${file}: ${(total / 1024 ** 2).toFixed(1)} MB sampled (allocation sampling: where bytes were allocated, live or not)`,
    '',
    `allocation sites, top ${options.top}:`,
    ...sorted.slice(0, options.top).map(line),
    '',
    `allocation sites in the SDK's own code (src/), top ${options.top}:`,
    ...sorted
      .filter(([k]) => k.includes(' src/'))
      .slice(0, options.top)
      .map(line),
  ].join('\n')
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, match: { type: 'string', default: '' } },
  })
  const options = { top: Number(values.top), match: values.match.split(',').filter((m) => m !== '') }
  if (positionals.length === 0) throw new Error('usage: profile-summary.ts <file.cpuprofile|file.heapprofile>... [--top N] [--match a,b]')
  for (const file of positionals) {
    console.log(file.endsWith('.heapprofile') ? summarizeHeapProfile(file, options) : summarizeCpuProfile(file, options))
    console.log()
  }
}
