/**
 * Preload (`node --import`) for child processes that run an example from source: resolves the
 * package's own names to src/, as vitest's aliases do in the test process, so that the examples
 * can be tested without a build (`npm test` needs none). With SDK_FROM_SOURCE_BUNDLES set (the test
 * run's bundles, test/helpers/sdk-bundle.ts), 'chat-service-sdk' resolves to the bundle of
 * src/index.ts instead, and an `import` of a package bundled there (undici, zod, BullMQ, ioredis),
 * by its name or its entry file's path, to its bundle: the same code, loaded at less cost, and one
 * copy of it for the SDK and the child's own code. A `require` still loads the installed package.
 */
import { existsSync } from 'node:fs'
import { registerHooks } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const directory = process.env['SDK_FROM_SOURCE_BUNDLES']
/** The bundle of `name` ('chat-service-sdk', 'bullmq'...), when the run made one. */
const bundle = (name: string): string | undefined => {
  const file = directory === undefined ? undefined : join(directory, `${name}.mjs`)
  return file !== undefined && existsSync(file) ? pathToFileURL(file).href : undefined
}
// Named bundles that are not there are a mistake of the test run (an old name, a half-made
// directory): loading src/ instead would pass, only slower.
if (directory !== undefined && bundle('chat-service-sdk') === undefined) {
  throw new Error(`SDK_FROM_SOURCE_BUNDLES=${directory} holds no chat-service-sdk.mjs (test/helpers/sdk-bundle.ts)`)
}
const SDK = bundle('chat-service-sdk') ?? new URL('../../src/index.ts', import.meta.url).href
const TESTING = new URL('../../src/testing/index.ts', import.meta.url).href
/** The bundles, by the package's name and by the URL of the file an import of that name loads. */
const PACKAGES = new Map(
  ['undici', 'zod', 'bullmq', 'ioredis'].flatMap((name) => {
    const url = bundle(name)
    return url === undefined ? [] : [[name, url] as const, [import.meta.resolve(name), url] as const]
  }),
)

registerHooks({
  resolve(specifier, context, next) {
    if (specifier === 'chat-service-sdk') return { url: SDK, shortCircuit: true }
    if (specifier === 'chat-service-sdk/testing') return { url: TESTING, shortCircuit: true }
    if (!context.conditions.includes('import') || PACKAGES.size === 0) return next(specifier, context)
    const url = PACKAGES.get(specifier)
    if (url !== undefined) return { url, shortCircuit: true }
    const resolved = next(specifier, context)
    const bundled = PACKAGES.get(resolved.url)
    return bundled === undefined ? resolved : { url: bundled, shortCircuit: true }
  },
})
