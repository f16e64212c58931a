// Where the suite's CPU time goes, file by file: with TEST_CPU_TSV=FILE set (vitest.config.ts adds
// this setup file then), each test file appends one line to FILE when it ends:
//
//   path <tab> CPU s of the worker <tab> CPU s of its child processes <tab> wall s
//        <tab> page faults of the worker <tab> page faults of its child processes
//
// CPU is user + system, read from /proc/self/stat (Linux) before the file's first hook and after its
// last: the worker's own time, and the time of the child processes it waited for (a child still
// running, such as tsup's esbuild service, is counted when it ends, by whichever file runs then).
// Page faults are minor ones (a page touched for the first time), fields 10 and 11: a steadier
// figure than CPU under load, and on a machine that hands memory back to its host (where each costs
// some 11 µs: DEVELOPERS.md, "How the suite runs") a large part of the system time.
// The workers run one file at a time each, so the figures are the file's. What runs before the
// hooks (importing the file's modules) and vitest's own process are not counted: compare the sum
// with `/usr/bin/time -v npm test`. DEVELOPERS.md, "How the suite runs", says how to read it.
import { appendFileSync, readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { afterAll, beforeAll } from 'vitest'

/** This process's CPU time so far, in seconds, and its minor page faults: its own, and those of the children it waited for. */
function usage(): { readonly own: number; readonly children: number; readonly faults: number; readonly childFaults: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  // After the command name (in parentheses, which may hold spaces): field 3 on; utime, stime,
  // minflt and cminflt are fields 10 and 11; utime, stime, cutime and cstime are fields 14 to 17,
  // in clock ticks (100 a second on Linux).
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number)
  const field = (index: number): number => fields[index - 3] ?? Number.NaN
  return {
    own: (field(14) + field(15)) / 100,
    children: (field(16) + field(17)) / 100,
    faults: field(10),
    childFaults: field(11),
  }
}

const output = process.env['TEST_CPU_TSV']
let file = ''
let start = usage()
let startedAt = 0

// vitest hands a hook's context first, and takes a first parameter that is not an object pattern for a fixture.
// eslint-disable-next-line no-empty-pattern
beforeAll(({}, suite) => {
  file = 'filepath' in suite ? suite.filepath : suite.name
  start = usage()
  startedAt = performance.now()
})

afterAll(() => {
  if (output === undefined) return
  const end = usage()
  const row = [
    relative(process.cwd(), file),
    (end.own - start.own).toFixed(2),
    (end.children - start.children).toFixed(2),
    ((performance.now() - startedAt) / 1000).toFixed(1),
    String(end.faults - start.faults),
    String(end.childFaults - start.childFaults),
  ]
  appendFileSync(output, `${row.join('\t')}\n`)
})
