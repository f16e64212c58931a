import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import ChildProcessesFirst from './test/setup/sequencer.ts'

// Node.js's compile cache for the test workers and every process the tests start (the command,
// examples, child scripts), which inherit it: code that Node.js loads itself (node_modules, the
// built package, examples run from source) is compiled once per machine, not once per process.
process.env['NODE_COMPILE_CACHE'] ??= fileURLToPath(new URL('./node_modules/.cache/node-compile-cache', import.meta.url))

export default defineConfig({
  resolve: {
    alias: {
      'chat-service-sdk/testing/msw': fileURLToPath(new URL('./src/testing/msw.ts', import.meta.url)),
      'chat-service-sdk/testing': fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)),
      'chat-service-sdk': fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    // Eight test files at a time, whatever the cores. The suite is bound by the CPU (on 2 cores it
    // cannot take less than half its CPU time), but many files spend seconds waiting (a 10 s stop
    // bound, a `Retry-After`, an idle HTTP/2 session, child processes starting), and vitest's own
    // order (the longest files first) runs those together: with 4 workers, `vmstat 1` showed the
    // cores 30-60 % idle for two stretches of 12 s. Alternated whole runs on a quiet 2-core machine
    // (27 Nov 2026, `time npx vitest run --maxWorkers N`): 4 used 0.83-0.85 of the 2 cores' time
    // (75.7-84.2 s), 6 used 0.91-0.96 (62.7-75.5 s), 8 used 0.97 (60.9-71.2 s), 10 as much, on more
    // CPU. vitest's default (cores - 1) runs ONE file at a time on 2 cores: 162 s, once.
    maxWorkers: 8,
    // The files one worker runs share its process and module cache: evaluating undici, zod, msw and
    // src/ once per worker instead of once per file cuts the suite's CPU time by a third (169 s to
    // ~110 s; with the compile cache above, 90-100 s, at the time: DEVELOPERS.md, "How the suite
    // runs", has the figures of today).
    // A file that leaves state behind for the next (env, cwd, globals, listeners, patched modules,
    // fake timers, open servers) fails, naming it: test/setup/shared-worker-guard.ts.
    isolate: false,
    // TEST_CPU_TSV=FILE: each file's CPU seconds (and its child processes') appended to FILE
    // (test/setup/cpu-meter.ts; DEVELOPERS.md, "How the suite runs").
    // child-compile-cache.ts: the compile cache back on for the processes the tests start, which
    // `--coverage` turns off (the file says why that is safe); before the guard, which would take
    // the change for one a test file made.
    setupFiles: [
      './test/setup/child-compile-cache.ts',
      './test/setup/shared-worker-guard.ts',
      ...(process.env['TEST_CPU_TSV'] === undefined ? [] : ['./test/setup/cpu-meter.ts']),
    ],
    // A directory for the run, where what every file would otherwise make again (the packed
    // tarball) is made once, by the first file that needs it.
    globalSetup: ['./test/setup/run-directory.ts'],
    unstubEnvs: true,
    unstubGlobals: true,
    // The few files that run child processes for half a minute start first (see the file).
    sequence: { sequencer: ChildProcessesFirst },
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      // The `chat-service` command: most of its behaviour runs in-process (test/cli/), but its
      // exits, signals, pipes, terminals and lock run in child processes of the packed tarball,
      // which v8 coverage does not follow (in-process alone it shows 74 % of lines): a figure for
      // src/cli would say less than the tests do.
      exclude: ['src/cli/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: '.ci/out/coverage',
      thresholds: { lines: 90, branches: 85 },
    },
  },
})
