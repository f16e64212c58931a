// Where the suite's CPU time goes, file by file: with TEST_CPU_TSV=FILE set (vitest.config.ts adds
// this setup file then), each test file appends one line to FILE when it ends:
//
//   path <tab> CPU s of the worker <tab> CPU s of its child processes <tab> wall s
//
// CPU is user + system, read from /proc/self/stat (Linux) before the file's first hook and after its
// last: the worker's own time, and the time of the child processes it waited for (a child still
// running, such as tsup's esbuild service, is counted when it ends, by whichever file runs then).
// The workers run one file at a time each, so the figures are the file's. What runs before the
// hooks (importing the file's modules) and vitest's own process are not counted: compare the sum
// with `/usr/bin/time -v npm test`. DEVELOPERS.md, "How the suite runs", says how to read it.
import { appendFileSync, readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { afterAll, beforeAll } from 'vitest'

/** This process's CPU time so far, in seconds: its own, and that of the children it waited for. */
function cpuSeconds(): { readonly own: number; readonly children: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  // After the command name (in parentheses, which may hold spaces): field 3 on; utime, stime,
  // cutime and cstime are fields 14 to 17, in clock ticks (100 a second on Linux).
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number)
  const ticks = (index: number): number => fields[index - 3] ?? Number.NaN
  return { own: (ticks(14) + ticks(15)) / 100, children: (ticks(16) + ticks(17)) / 100 }
}

const output = process.env['TEST_CPU_TSV']
let file = ''
let start = cpuSeconds()
let startedAt = 0

// vitest hands a hook's context first, and takes a first parameter that is not an object pattern for a fixture.
// eslint-disable-next-line no-empty-pattern
beforeAll(({}, suite) => {
  file = 'filepath' in suite ? suite.filepath : suite.name
  start = cpuSeconds()
  startedAt = performance.now()
})

afterAll(() => {
  if (output === undefined) return
  const end = cpuSeconds()
  const row = [
    relative(process.cwd(), file),
    (end.own - start.own).toFixed(2),
    (end.children - start.children).toFixed(2),
    ((performance.now() - startedAt) / 1000).toFixed(1),
  ]
  appendFileSync(output, `${row.join('\t')}\n`)
})
