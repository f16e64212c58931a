// The SDK's root module (src/index.ts) and the packages the examples' processes import (undici, zod,
// BullMQ, ioredis), bundled once per test run for the child processes that run the examples and the
// guides' workers from source: with SDK_FROM_SOURCE_BUNDLES naming the directory,
// sdk-from-source.ts resolves 'chat-service-sdk' and those packages to it. A child then loads a few
// modules instead of src/'s ~70 and the packages' ~600 CommonJS files, each resolved and read on its
// own: a distributed export worker started on some 0.21 s of CPU instead of 0.36 s (~40 such
// processes a run: DEVELOPERS.md, "How the suite runs"). The examples' own files still run from
// source, as users run them (Node.js's type stripping, their relative imports); what is bundled is
// today's src/ (bundled by esbuild as tsup bundles the published build, without types or checks:
// the typecheck's) and the installed packages' own code, unchanged. One build with code splitting:
// a package two entries share (undici, ioredis) is one module, loaded once. The testing kit stays
// source: it imports nothing of the SDK.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { makeOncePerRun } from './once-per-run.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const ENTRY = fileURLToPath(new URL('../../src/index.ts', import.meta.url))

/**
 * The packages bundled, as Node.js loads them for an `import`: an ES module package re-exported as
 * it is; a CommonJS one as `module.exports` (the default export) and its keys (the named exports;
 * Node.js finds the same names, or fewer, by reading the file).
 */
const PACKAGES = { undici: 'commonjs', zod: 'module', bullmq: 'commonjs', ioredis: 'commonjs' } as const

/**
 * The environment a child started with `--import test/helpers/sdk-from-source.ts` needs to load the
 * bundles (`SDK_FROM_SOURCE_BUNDLES`, their directory). The first caller of the run bundles (in the
 * run's directory, test/setup/run-directory.ts); the others, in any worker, wait for it.
 */
export function sdkBundleEnv(): Promise<{ SDK_FROM_SOURCE_BUNDLES: string }> {
  return (bundled ??= bundleOnce().then((directory) => ({ SDK_FROM_SOURCE_BUNDLES: directory })))
}
let bundled: Promise<{ SDK_FROM_SOURCE_BUNDLES: string }> | undefined

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
  return makeOncePerRun('sdk-bundle', 'bundling the SDK', 60_000, async (directory) => {
    // Loaded by the one file that bundles, not by every file that waits.
    const { build } = await import('esbuild')
    const names = Object.keys(PACKAGES) as (keyof typeof PACKAGES)[]
    const keys = await commonJsKeys()
    await build({
      entryPoints: [{ in: ENTRY, out: 'chat-service-sdk' }, ...names.map((name) => ({ in: `package:${name}`, out: name }))],
      outdir: directory,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      logLevel: 'error',
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
    return directory
  })
}
