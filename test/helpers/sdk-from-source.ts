/**
 * Preload (`node --import`) for child processes that run an example from source: resolves the
 * package's own names to src/, as vitest's aliases do in the test process, so that the examples
 * can be tested without a build (`npm test` needs none). With SDK_FROM_SOURCE_BUNDLE set (the test
 * run's bundle of src/index.ts, test/helpers/sdk-bundle.ts), 'chat-service-sdk' resolves to that
 * one module instead: the same sources, loaded at less cost. The bundle lives in the run's
 * temporary directory: its own imports (undici, zod) resolve as src/index.ts's do.
 */
import { registerHooks } from 'node:module'
import { pathToFileURL } from 'node:url'

const SOURCE = new URL('../../src/index.ts', import.meta.url).href
const path = process.env['SDK_FROM_SOURCE_BUNDLE']
const bundle = path === undefined ? undefined : pathToFileURL(path).href
const ENTRIES: Record<string, string> = {
  'chat-service-sdk': bundle ?? SOURCE,
  'chat-service-sdk/testing': new URL('../../src/testing/index.ts', import.meta.url).href,
}

registerHooks({
  resolve(specifier, context, next) {
    const url = ENTRIES[specifier]
    if (url !== undefined) return { url, shortCircuit: true }
    return next(specifier, context.parentURL === bundle ? { ...context, parentURL: SOURCE } : context)
  },
})
