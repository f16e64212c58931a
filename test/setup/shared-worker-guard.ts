// The suite runs with `isolate: false` (vitest.config.ts): the test files that one worker runs share
// its process and its module cache, which cuts the suite's CPU time by a third. The price is that a
// file can leave something behind for the files after it. This setup file (run before every test
// file) notes what a file could leave, and after the file's last hook fails that file, by name, if
// it left any of it:
//
// - environment variables set, changed or removed (names only: values may be secrets), and
//   process.env itself replaced;
// - the working directory;
// - fake timers still installed;
// - globals added or removed (string keys; a module's own symbol-keyed caches are allowed);
// - listeners on `process` for its error, warning, exit and signal events (but the SDK's own
//   'beforeExit' listener, `chatServiceSdkExitHold` in src/internal/exit-hold.ts, added once per
//   loaded copy of the SDK by its first call and kept while the module is: not a file's leftover);
// - node:http, node:https, node:net or fetch replaced (msw's interceptors) and not restored, and
//   undici's global dispatcher replaced;
// - console methods or process.emitWarning replaced (a vi.spyOn is let through: vitest restores
//   every mock after each file);
// - servers left listening.
//
// It does not see timers, sockets or child processes a file leaves running: a late callback of one
// shows up in whichever file runs then (`npx vitest run --detectAsyncLeaks` names the file that
// started it). Today the only ones are the test servers' own delayed answers, after they closed.
//
// vi.stubEnv and vi.stubGlobal are undone before each test (vitest's `unstubEnvs`, `unstubGlobals`)
// and here after the file's last one.
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { getGlobalDispatcher } from 'undici'
import { afterAll, beforeAll, vi } from 'vitest'

/** The SDK's own 'beforeExit' listener (src/internal/exit-hold.ts), which stays as long as its module does. */
const SDK_LISTENER = 'chatServiceSdkExitHold'
const PROCESS_EVENTS = ['unhandledRejection', 'uncaughtException', 'warning', 'exit', 'beforeExit', 'SIGINT', 'SIGTERM'] as const

interface Shared {
  readonly env: Record<string, string | undefined>
  readonly cwd: string
  readonly globals: ReadonlySet<string>
  readonly listeners: Readonly<Record<string, number>>
  readonly functions: ReadonlyMap<string, unknown>
  readonly dispatcher: unknown
  readonly servers: number
}

/** Functions that a test may replace for a while and must put back: [name, owner, key]. */
const REPLACEABLE: readonly (readonly [string, object, string])[] = [
  ['http.request', http, 'request'],
  ['http.get', http, 'get'],
  ['https.request', https, 'request'],
  ['https.get', https, 'get'],
  ['net.connect', net, 'connect'],
  ['net.createConnection', net, 'createConnection'],
  ['net.Socket.prototype.connect', net.Socket.prototype, 'connect'],
  ['net.Socket.prototype.write', net.Socket.prototype, 'write'],
  ['globalThis.fetch', globalThis, 'fetch'],
  ...(['log', 'info', 'warn', 'error', 'debug'] as const).map((key) => [`console.${key}`, console, key] as const),
  ['process.emitWarning', process, 'emitWarning'],
  ['process.env (the object itself)', process, 'env'],
]

function replaceable(): Map<string, unknown> {
  return new Map(REPLACEABLE.map(([name, owner, key]) => [name, Reflect.get(owner, key)]))
}

function listeningServers(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap' || kind === 'PipeServerWrap').length
}

function snapshot(): Shared {
  return {
    env: { ...process.env },
    cwd: process.cwd(),
    globals: new Set(Object.getOwnPropertyNames(globalThis)),
    listeners: Object.fromEntries(
      PROCESS_EVENTS.map((event) => [
        event,
        (process as NodeJS.EventEmitter).listeners(event).filter((fn) => fn.name !== SDK_LISTENER).length,
      ]),
    ),
    functions: replaceable(),
    dispatcher: getGlobalDispatcher(),
    servers: listeningServers(),
  }
}

/** What differs between `before` and `after`, one line each. */
function leftBehind(before: Shared, after: Shared): string[] {
  const left: string[] = []
  const names = new Set([...Object.keys(before.env), ...Object.keys(after.env)])
  const env = [...names].filter((name) => before.env[name] !== after.env[name])
  if (env.length > 0) left.push(`environment variables set, changed or removed: ${env.join(', ')}`)
  if (after.cwd !== before.cwd) left.push(`the working directory: ${after.cwd} (was ${before.cwd})`)
  if (vi.isFakeTimers()) left.push('fake timers (call vi.useRealTimers())')
  const added = [...after.globals].filter((name) => !before.globals.has(name))
  const removed = [...before.globals].filter((name) => !after.globals.has(name))
  if (added.length > 0) left.push(`globals added: ${added.join(', ')}`)
  if (removed.length > 0) left.push(`globals removed: ${removed.join(', ')}`)
  for (const event of PROCESS_EVENTS) {
    const count = after.listeners[event] ?? 0
    if (count !== before.listeners[event]) left.push(`process '${event}' listeners: ${count} (were ${before.listeners[event] ?? 0})`)
  }
  for (const [name, fn] of after.functions) {
    if (fn !== before.functions.get(name) && !vi.isMockFunction(fn)) left.push(`${name} replaced`)
  }
  if (after.dispatcher !== before.dispatcher) left.push("undici's global dispatcher replaced (setGlobalDispatcher)")
  if (after.servers > before.servers) left.push(`servers still listening: ${after.servers - before.servers}`)
  return left
}

// Taken as vitest runs this file, before it imports the test file (it runs it for every file, also
// without isolation), so that what a file does at import time is the file's: everything but the
// globals and the replaceable functions. Those are taken after the file's imports: a library loaded
// for the first time in this worker may add globals of its own (zod's and msw's registries, tslib's
// helpers), which then stay for every file, as the module does.
const atImport = snapshot()
let before: Shared | undefined

beforeAll(() => {
  const afterImports = snapshot()
  before = { ...atImport, globals: afterImports.globals, functions: afterImports.functions, dispatcher: afterImports.dispatcher }
})

// Registered before the file's own hooks, so (hooks run as a stack) it runs after all of them.
afterAll(async () => {
  if (before === undefined) return
  vi.unstubAllEnvs()
  vi.unstubAllGlobals()
  // A server closed in the file's last hook lets go of its handle in the event loop's close phase,
  // which comes after setImmediate's: a few turns (node:timers/promises, which fake timers left
  // installed do not reach).
  for (let turn = 0; turn < 10 && listeningServers() > before.servers; turn++) await nextTurn()
  const left = leftBehind(before, snapshot())
  if (left.length > 0) {
    throw new Error(
      `This test file left behind, for the next files of its worker (the suite runs with isolate: false; see test/setup/shared-worker-guard.ts):\n- ${left.join('\n- ')}`,
    )
  }
})
