// Refuses to load the SDK on a Node.js older than its `engines` floor, with one clear line.
//
// Why a module of its own: undici 8 (the transport) crashes while it is being evaluated on Node 20
// (`TypeError: Cannot read properties of undefined (reading 'bind')`), and `npm install` only
// warns (EBADENGINE). ESM evaluates a file's imports in order, and the build hoists the imports of
// `undici` and `zod` above any code of the entry file, so a check written inline in an entry would
// run too late. Each entry therefore imports this file FIRST, and the build keeps it as a separate
// file (`dist/engine-check.js` / `.cjs`, external to the entry bundles) so that its `import` /
// `require` stays the first one in every entry's output. `package.json` lists it in `sideEffects`
// so that bundlers keep it.
//
// The entries import it as `import {} from './engine-check.ts'`, not `import './engine-check.ts'`:
// the build keeps both forms (verbatimModuleSyntax), but TypeScript keeps only the bare form in the
// declaration files, where it drags the entry's `@packageDocumentation` comment below the other
// imports and api-extractor fails (ae-misplaced-package-tag).
//
// The check throws (it does not exit the process), so that an app that loads the SDK with a
// dynamic `import()` can catch it; uncaught, Node.js prints the message within the throwing line
// and a stack trace. The package's own commands instead print the one line and exit with 1.
//
// @packageDocumentation

/**
 * The lowest Node.js the SDK supports: `engines.node` of package.json (`>=22.19`), undici 8's floor.
 * @internal
 */
export const MIN_NODE_VERSION = '22.19.0'

/** `[major, minor, patch]` of a version string such as `v20.20.2` or `22.19.0`; NaN parts for anything else. */
function parts(version: string): [number, number, number] {
  const [major = NaN, minor = NaN, patch = NaN] = version.replace(/^v/, '').split('.').map(Number)
  return [major, minor, patch]
}

/**
 * The one-line message for a Node.js version older than {@link MIN_NODE_VERSION}, or `undefined`
 * when `version` (`process.versions.node`, e.g. `20.20.2`) is supported. A version that does not
 * parse is let through: refusing a runtime we cannot read would be a guess.
 * @internal
 */
export function unsupportedNodeMessage(version: string): string | undefined {
  const found = parts(version)
  const [major, minor, patch] = found
  const [neededMajor, neededMinor, neededPatch] = parts(MIN_NODE_VERSION)
  if (!found.every(Number.isInteger)) return undefined
  const older = major !== neededMajor ? major < neededMajor : minor !== neededMinor ? minor < neededMinor : patch < neededPatch
  if (!older) return undefined
  return (
    `chat-service-sdk needs Node.js >= ${MIN_NODE_VERSION}; this is Node.js v${found.join('.')}. ` +
    `Upgrade Node.js to ${MIN_NODE_VERSION} or later (its HTTP client, undici 8, does not load on older versions).`
  )
}

/**
 * The package's command this process runs (`chat-service`, `chat-service-fake`), or `undefined`
 * when it runs something else (an app that loads the SDK). Read from the script Node.js was started
 * with, its links resolved (npm's `.bin` entries are links), against this file's own place in
 * dist/. Node.js 20.16 and 22.3 or later only (`process.getBuiltinModule`, so that this file imports
 * nothing a browser bundle would trip on); on older ones, `undefined`.
 */
function commandRunning(): string | undefined {
  // Absent before Node.js 20.16 and 22.3 (its types say it is always there).
  const builtin = (process as { getBuiltinModule?: NodeJS.Process['getBuiltinModule'] }).getBuiltinModule
  const script = process.argv[1]
  if (builtin === undefined || script === undefined) return undefined
  const fs = builtin('node:fs')
  const path = builtin('node:path')
  const url = builtin('node:url')
  try {
    const started = fs.realpathSync(script)
    // Bundled into an app (esbuild's CommonJS output leaves `import.meta` empty), this file is no
    // longer in dist/: fileURLToPath throws, and an app is not the command.
    const dist = path.dirname(url.fileURLToPath(import.meta.url))
    if (started === path.join(dist, 'cli', 'index.cjs')) return 'chat-service'
    if (started === path.join(dist, 'testing', 'cli.js')) return 'chat-service-fake'
  } catch {
    // A script that cannot be resolved, or no place of this file: not the command.
  }
  return undefined
}

// Outside Node (no `process.versions.node`: a browser bundle, where the client refuses to start
// anyway) there is nothing to check.
const running = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node
const message = running === undefined ? undefined : unsupportedNodeMessage(running)
if (message !== undefined) {
  // A command says it the way it says every error, one line and exit status 1: thrown, Node.js
  // would print the throwing line of this file, a caret and a stack trace around it.
  const command = commandRunning()
  if (command !== undefined) {
    process.stderr.write(`${command}: ${message}\n`)
    process.exit(1)
  }
  throw new Error(message)
}
