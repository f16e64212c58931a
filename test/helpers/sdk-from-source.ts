/**
 * Preload (`node --import`) for child processes that run an example from source: resolves the
 * package's own names to src/, as vitest's aliases do in the test process, so that the examples
 * can be tested without a build (`npm test` needs none).
 */
import { registerHooks } from 'node:module'

const ENTRIES: Record<string, string> = {
  'chat-service-sdk': new URL('../../src/index.ts', import.meta.url).href,
  'chat-service-sdk/testing': new URL('../../src/testing/index.ts', import.meta.url).href,
}

registerHooks({
  resolve(specifier, context, next) {
    const url = ENTRIES[specifier]
    return url === undefined ? next(specifier, context) : { url, shortCircuit: true }
  },
})
