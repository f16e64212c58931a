// The SDK's root module (src/index.ts) and the packages the examples' processes import (undici, zod,
// BullMQ, ioredis), bundled for the child processes that run the examples and the guides' workers
// from source (by the first file of a run that needs them, and only when their sources changed since
// a run before: `inputsHash`): with SDK_FROM_SOURCE_BUNDLES naming the directory,
// sdk-from-source.ts resolves 'chat-service-sdk' and those packages to it. A child then loads a few
// modules instead of src/'s ~70 and the packages' ~450 files (BullMQ, ioredis and undici 414 of
// them), each resolved and read on its own: a distributed export worker started on some 0.21-0.29 s
// of CPU instead of 0.36-0.52 s (~50 such processes a run: DEVELOPERS.md, "How the suite runs").
// The examples' own files still run from source, as users run them (Node.js's type stripping,
// their relative imports); what is bundled is today's src/ (bundled by esbuild as tsup bundles the
// published build, without types or checks: the typecheck's) and the installed packages' own code,
// unchanged. One build with code splitting: a package two entries share (undici, ioredis) is one
// module, loaded once. The testing kit stays source: it imports nothing of the SDK.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rename, rm, stat, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { hashOfFiles } from './inputs-hash.ts'
import { makeOncePerRun } from './once-per-run.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const ENTRY = fileURLToPath(new URL('../../src/index.ts', import.meta.url))
/** Where the bundles stay between runs (test/helpers/sdk-bundle.ts, `keep`), and how many. */
const CACHE = fileURLToPath(new URL('../../node_modules/.cache/test-bundles', import.meta.url))
const KEEP = 4

/**
 * The packages bundled, as Node.js loads them for an `import`: an ES module package re-exported as
 * it is; a CommonJS one as `module.exports` (the default export) and its keys (the named exports;
 * Node.js finds the same names, or fewer, by reading the file).
 */
const PACKAGES = { undici: 'commonjs', zod: 'module', bullmq: 'commonjs', ioredis: 'commonjs' } as const

/**
 * The environment a child started with `--import test/helpers/sdk-from-source.ts` needs to load the
 * bundles (`SDK_FROM_SOURCE_BUNDLES`, their directory). The first caller of the run bundles (claimed
 * in the run's directory, test/setup/run-directory.ts; kept where Node.js's compile cache finds them
 * again, `keep`); the others, in any worker, wait for it.
 */
export function sdkBundleEnv(): Promise<{ SDK_FROM_SOURCE_BUNDLES: string }> {
  return (bundled ??= bundleOnce().then((directory) => ({ SDK_FROM_SOURCE_BUNDLES: directory })))
}
let bundled: Promise<{ SDK_FROM_SOURCE_BUNDLES: string }> | undefined

/**
 * The URL of the SDK's bundle (the same build as {@link sdkBundleEnv}'s), for a child process that
 * imports the SDK by its path (`node -e "await import(url)"`) and needs no other package: undici and
 * zod come bundled in, some 0.1 s of CPU less a start than src/'s modules and the packages' files.
 */
export async function sdkBundleUrl(): Promise<string> {
  return pathToFileURL(join((await sdkBundleEnv()).SDK_FROM_SOURCE_BUNDLES, 'chat-service-sdk.mjs')).href
}

/**
 * The keys of each CommonJS package's `module.exports`, read in a child process: loading BullMQ here
 * would leave tslib's helpers as globals of the test worker, which the next test files share.
 */
async function commonJsKeys(): Promise<Record<string, string[]>> {
  const names = Object.entries(PACKAGES).flatMap(([name, kind]) => (kind === 'commonjs' ? [name] : []))
  const script = `console.log(JSON.stringify(Object.fromEntries(${JSON.stringify(names)}.map((name) => [name, Object.keys(require(name))]))))`
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })
  return JSON.parse(stdout) as Record<string, string[]>
}

/** The entry module of `name`, as source text. */
function entry(name: keyof typeof PACKAGES, keys: Record<string, string[]>): string {
  if (PACKAGES[name] === 'module') return `export * from '${name}'`
  const named = (keys[name] ?? []).filter((key) => key !== 'default' && /^[A-Za-z_$][\w$]*$/.test(key))
  return `const exported = require('${name}')\nexport default exported\nexport const { ${named.join(', ')} } = exported\n`
}

async function bundleOnce(): Promise<string> {
  return makeOncePerRun('sdk-bundle', 'bundling the SDK', 60_000, async () => {
    const kept = join(CACHE, await inputsHash())
    if (existsSync(join(kept, 'chat-service-sdk.mjs'))) {
      // Made by a run before from the same sources and packages: esbuild's build and the child
      // that reads the packages' exports (some 1.3 s of CPU) are not needed again.
      const now = new Date()
      await utimes(kept, now, now)
      await forgetOld(kept)
      return kept
    }
    // Loaded by the one file that bundles, not by every file that waits.
    const { build } = await import('esbuild')
    const names = Object.keys(PACKAGES) as (keyof typeof PACKAGES)[]
    const keys = await commonJsKeys()
    // Made beside where it stays, so that it moves there whole (a rename).
    await mkdir(CACHE, { recursive: true })
    const out = await mkdtemp(join(CACHE, '.building-'))
    try {
      await build({
        entryPoints: [{ in: ENTRY, out: 'chat-service-sdk' }, ...names.map((name) => ({ in: `package:${name}`, out: name }))],
        outdir: out,
        bundle: true,
        splitting: true,
        format: 'esm',
        platform: 'node',
        target: 'node22',
        logLevel: 'error',
        // .mjs, not .js: a .js file outside a package with a `type` is of no known format, and
        // Node.js first compiles it as CommonJS to see (the compile cache's CommonJS entry misses, a
        // syntax error is thrown and caught) before it loads it as an ES module: some 14 % of the
        // instructions a child spends loading the SDK, BullMQ and ioredis (callgrind, 0.93 G to 0.80 G).
        outExtension: { '.js': '.mjs' },
        // The packages' CommonJS code calls `require` for Node.js's own modules.
        banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
        plugins: [
          {
            name: 'package-entries',
            setup(build) {
              build.onResolve({ filter: /^package:/ }, (args) => ({ path: args.path.slice('package:'.length), namespace: 'package' }))
              build.onLoad({ filter: /.*/, namespace: 'package' }, (args) => ({
                contents: entry(args.path as keyof typeof PACKAGES, keys),
                resolveDir: ROOT,
                loader: 'js',
              }))
            },
          },
        ],
      })
    } catch (error) {
      await rm(out, { recursive: true, force: true })
      throw error
    }
    return keep(out, kept)
  })
}

/**
 * What the bundles are made from: every file of src/ (the SDK's entry imports only src/ and the
 * packages), package-lock.json (the packages, esbuild), package.json and tsconfig.json (which
 * esbuild reads too) and this file (how they are bundled). The same hash, the same bundles.
 */
function inputsHash(): Promise<string> {
  return hashOfFiles(['src', 'package-lock.json', 'package.json', 'tsconfig.json', 'test/helpers/sdk-bundle.ts'])
}

/**
 * Moves the bundles of `out` to `kept` (node_modules/.cache/test-bundles/<the hash of their
 * sources>), or leaves them, when a run at the same time made the same, and returns `kept`.
 * Node.js's compile cache keys code by its file's path: a path of the run's own would miss it in
 * every run, in each of the first processes, which start together (some 0.05-0.1 s of CPU each),
 * and leave the cache a new entry each run.
 */
async function keep(out: string, kept: string): Promise<string> {
  try {
    await rename(out, kept)
  } catch (error) {
    // Made by a run at the same time: the same files.
    if (!existsSync(join(kept, 'chat-service-sdk.mjs'))) throw error
    await rm(out, { recursive: true, force: true })
  }
  await forgetOld(kept)
  return kept
}

/** Keeps the last few bundle directories (the newest used first): a branch switched back to finds its own. */
async function forgetOld(kept: string): Promise<void> {
  const names = (await readdir(CACHE)).filter((name) => /^[\da-f]{16}$/.test(name))
  const others = await Promise.all(names.map(async (name) => ({ path: join(CACHE, name), used: (await stat(join(CACHE, name))).mtimeMs })))
  const old = others
    .filter(({ path }) => path !== kept)
    .sort((a, b) => b.used - a.used)
    .slice(KEEP - 1)
  await Promise.all(old.map(({ path }) => rm(path, { recursive: true, force: true })))
}
