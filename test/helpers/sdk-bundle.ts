// The SDK's root module (src/index.ts) bundled into one ES module, once per test run, for the child
// processes that run the examples and the guides' workers from source: with SDK_FROM_SOURCE_BUNDLE
// naming it, sdk-from-source.ts resolves 'chat-service-sdk' to it, and a child loads one module
// instead of src/'s ~70 (some 0.05 s of CPU less a process, against ~0.1 s once for the bundle;
// some 40 such processes a run: DEVELOPERS.md, "How the suite runs"). It is today's src/, bundled by
// esbuild as tsup bundles the published build (undici and zod stay packages), without types or
// checks (the typecheck's). The testing kit stays source: it imports nothing of the SDK.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { inject } from 'vitest'

const ENTRY = fileURLToPath(new URL('../../src/index.ts', import.meta.url))

/** What the file that bundles leaves for the others: the bundle's path, or why bundling failed. */
type BundleResult = { readonly bundle: string } | { readonly error: string }

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
  const directory = join(inject('runDirectory'), 'sdk-bundle')
  const resultFile = join(directory, 'result.json')
  if (!claim(directory)) {
    // Another file is bundling: its result, once written (renamed into place whole).
    const deadline = performance.now() + 60_000
    while (!existsSync(resultFile)) {
      if (performance.now() > deadline) throw new Error(`no SDK bundle in ${directory} after 60 s`)
      await sleep(20)
    }
    const result = JSON.parse(readFileSync(resultFile, 'utf8')) as BundleResult
    if ('error' in result) throw new Error(`bundling the SDK failed (in another test file): ${result.error}`)
    return result.bundle
  }
  let result: BundleResult
  try {
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
    result = { bundle }
  } catch (error) {
    result = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) }
  }
  writeFileSync(`${resultFile}.partial`, JSON.stringify(result))
  renameSync(`${resultFile}.partial`, resultFile)
  if ('error' in result) throw new Error(result.error)
  return result.bundle
}

/** Makes `directory`; `false` when it is there already (mkdir is atomic: one caller of all the workers gets `true`). */
function claim(directory: string): boolean {
  try {
    mkdirSync(directory)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}
