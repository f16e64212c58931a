// The SDK's root module (src/index.ts) bundled into one ES module, once per test run, for the child
// processes that run the examples and the guides' workers from source: with SDK_FROM_SOURCE_BUNDLE
// naming it, sdk-from-source.ts resolves 'chat-service-sdk' to it, and a child loads one module
// instead of src/'s ~70 (some 0.05 s of CPU less a process, against ~0.1 s once for the bundle;
// some 40 such processes a run: DEVELOPERS.md, "How the suite runs"). It is today's src/, bundled by
// esbuild as tsup bundles the published build (undici and zod stay packages), without types or
// checks (the typecheck's). The testing kit stays source: it imports nothing of the SDK.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { makeOncePerRun } from './once-per-run.ts'

const ENTRY = fileURLToPath(new URL('../../src/index.ts', import.meta.url))

/**
 * The environment a child started with `--import test/helpers/sdk-from-source.ts` needs to load the
 * bundle (`SDK_FROM_SOURCE_BUNDLE`). The first caller of the run bundles (in the run's directory,
 * test/setup/run-directory.ts); the others, in any worker, wait for it.
 */
export function sdkBundleEnv(): Promise<{ SDK_FROM_SOURCE_BUNDLE: string }> {
  return (bundled ??= bundleOnce().then((bundle) => ({ SDK_FROM_SOURCE_BUNDLE: bundle })))
}
let bundled: Promise<{ SDK_FROM_SOURCE_BUNDLE: string }> | undefined

async function bundleOnce(): Promise<string> {
  return makeOncePerRun('sdk-bundle', 'bundling the SDK', 60_000, async (directory) => {
    const bundle = join(directory, 'index.js')
    // Loaded by the one file that bundles, not by every file that waits.
    const { build } = await import('esbuild')
    await build({
      entryPoints: [ENTRY],
      outfile: bundle,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      packages: 'external',
      logLevel: 'error',
    })
    return bundle
  })
}
