/**
 * Where the SDK runs, and why it refuses to run anywhere but a server.
 *
 * The SDK is for a company's server: every request carries the API key secret, which must never
 * reach an end user's device (spec, Authentication 4), and every GET carries a JSON body, which
 * `fetch()` cannot send, so the transport is undici's dispatch API, which exists on Node.js only.
 *
 * What counts is the runtime, not its globals: a test environment such as vitest's `happy-dom` or
 * `jsdom` defines `window` and `document` inside a Node.js process, which is still a server. So
 * the question is "is there a Node.js here" (`process.versions.node`), and only without one do
 * browser globals mean a browser. This module imports nothing: the browser entry
 * (`unsupported-runtime.ts`) and the client both use it, and it must load anywhere.
 *
 * @module
 */

/**
 * The kinds of runtime the SDK tells apart.
 * - `node`: Node.js (DOM shims such as happy-dom or jsdom included), and runtimes that present
 *   themselves as it (`process.versions.node`, not Bun), such as Deno's Node compatibility.
 * - `bun`: Bun, which replaces the `undici` package with its own whose dispatchers cannot dispatch.
 * - `electron-renderer`: an Electron renderer process: Node.js inside an end user's window.
 * - `browser`: a web page (`window` and `document`, no Node.js).
 * - `worker`: a web worker or service worker (no Node.js).
 * - `edge`: an edge runtime (Vercel Edge, Cloudflare Workers, `workerd`).
 * - `unknown`: none of these (a JavaScript engine without Node.js or browser globals).
 * @internal
 */
export type RuntimeKind = 'node' | 'bun' | 'electron-renderer' | 'browser' | 'worker' | 'edge' | 'unknown'

interface ProcessLike {
  versions?: Record<string, string | undefined>
  type?: unknown
}

/**
 * The runtime `scope` (default `globalThis`) belongs to, by its globals: Bun first (it also has
 * `process.versions.node`), then Node.js (`process.versions.node`, whatever DOM globals a test
 * environment adds), and only then browser, worker and edge globals.
 * @internal
 */
export function detectRuntime(scope: object = globalThis): RuntimeKind {
  const globals = scope as Record<string, unknown>
  const proc: unknown = globals['process']
  const versions = typeof proc === 'object' && proc !== null ? (proc as ProcessLike).versions : undefined
  if (typeof versions?.['bun'] === 'string') return 'bun'
  if (typeof versions?.['node'] === 'string') {
    // Electron's renderer has Node.js and a real window in front of an end user.
    return typeof versions['electron'] === 'string' && (proc as ProcessLike).type === 'renderer' ? 'electron-renderer' : 'node'
  }
  const navigator = globals['navigator'] as { userAgent?: unknown } | undefined
  if (typeof globals['EdgeRuntime'] === 'string' || navigator?.userAgent === 'Cloudflare-Workers') return 'edge'
  if (globals['window'] !== undefined && globals['document'] !== undefined) return 'browser'
  if (typeof globals['WorkerGlobalScope'] === 'function' || typeof globals['importScripts'] === 'function') return 'worker'
  return 'unknown'
}

/** Why the SDK is for servers only, in one sentence for every message that refuses. */
export const SERVER_ONLY_REASON =
  'chat-service-sdk runs on a server only (Node.js 22.19 or later): every request carries your API key secret, which must never reach ' +
  "an end user's device (spec, Authentication 4), and every GET carries a JSON body, which fetch() cannot send. " +
  'Issue chat tokens on your server and send only the token to the browser or app.'

const WHERE: Readonly<Record<Exclude<RuntimeKind, 'node' | 'bun' | 'unknown'>, string>> = {
  'electron-renderer': "an Electron renderer process (an end user's window)",
  browser: 'a browser',
  worker: 'a web worker',
  edge: 'an edge runtime',
}

/**
 * The message of the module that bundlers and non-Node runtimes get instead of the SDK (the
 * `browser`, `worker`, `edge-light` and `workerd` export conditions: unsupported-runtime.ts), for
 * the runtime that loaded it.
 * @internal
 */
export function unsupportedImportMessage(kind: RuntimeKind, bunVersion?: string): string {
  const build =
    "(package.json resolved the package's `browser`, `worker`, `edge-light` or `workerd` export condition to a module that holds nothing but this error)"
  if (kind === 'bun') return `${refusalMessage('bun', false, bunVersion) ?? ''} ${build}`
  if (kind === 'node' || kind === 'electron-renderer') {
    return (
      `chat-service-sdk: a bundler or test runner resolved the package for a browser or edge runtime, and Node.js loaded that build ${build}. ` +
      "Resolve it for Node.js: bundle server code with esbuild's platform 'node' (or your bundler's equivalent); under Jest's jsdom " +
      "environment, set testEnvironmentOptions: { customExportConditions: ['node', 'node-addons'] } for tests of server code. " +
      SERVER_ONLY_REASON
    )
  }
  const where = kind === 'unknown' ? 'this runtime' : WHERE[kind]
  return `chat-service-sdk cannot run in ${where}. ${SERVER_ONLY_REASON} ${build}`
}

/**
 * The message that refuses `kind`, or `undefined` for a runtime the SDK runs on (`node`, and
 * `unknown`, which it does not refuse on a guess). `allowBrowser` (the client's
 * `dangerouslyAllowBrowser`) lets browser-like runtimes through; nothing lets Bun through, where
 * the transport cannot work.
 * @internal
 */
export function refusalMessage(kind: RuntimeKind, allowBrowser = false, bunVersion?: string): string | undefined {
  if (kind === 'node' || kind === 'unknown') return undefined
  if (kind === 'bun') {
    return (
      `chat-service-sdk does not run on Bun${bunVersion === undefined ? '' : ` ${bunVersion}`}: Bun replaces the undici package with its own, ` +
      "whose dispatchers cannot dispatch a request (oven-sh/bun#6771), and the SDK's transport is undici's dispatch API " +
      '(fetch() cannot send the JSON body every GET carries). Run the SDK on Node.js 22.19 or later.'
    )
  }
  if (allowBrowser) return undefined
  return `ChatServiceClient refuses to run in ${WHERE[kind]}. ${SERVER_ONLY_REASON} If this really is a server, pass dangerouslyAllowBrowser: true.`
}
