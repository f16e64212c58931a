// The compile cache for the processes the tests start, with `--coverage` too (CI). vitest's v8
// coverage turns Node.js's compile cache off in the workers' environment (it removes
// NODE_COMPILE_CACHE and sets NODE_DISABLE_COMPILE_CACHE=1: compile-cached scripts lack the source
// positions its precise coverage reads), and every child a test starts with that environment
// inherits it. The children's coverage is not collected (vitest.config.ts: v8 coverage does not
// follow child processes), so for them the cache only saves time: the example's workers, the
// Indexed Job's pods and the other scripts run from source load undici, zod, BullMQ and src/
// compiled, some 0.3 s of CPU each instead of 0.7 s (the `chat-service` bin turns the cache on
// itself). The workers' own code is compiled as coverage needs: their cache is chosen when they
// start, not by these variables. Without `--coverage` this changes nothing (NODE_COMPILE_CACHE is
// set, vitest.config.ts), nor with coverage that follows child processes (NODE_V8_COVERAGE set).
// It runs before the shared-worker guard takes its first note of the environment.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const env = process.env
if (env['NODE_DISABLE_COMPILE_CACHE'] === '1' && env['NODE_COMPILE_CACHE'] === undefined && env['NODE_V8_COVERAGE'] === undefined) {
  delete env['NODE_DISABLE_COMPILE_CACHE']
  // Not `new URL(..., import.meta.url)`: under a DOM environment (happy-dom.test.ts) `URL` is the
  // DOM's, which node:url's fileURLToPath refuses.
  env['NODE_COMPILE_CACHE'] = join(dirname(fileURLToPath(import.meta.url)), '../../node_modules/.cache/node-compile-cache')
}
