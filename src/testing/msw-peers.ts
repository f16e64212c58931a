/**
 * Loads msw mode's optional peer dependencies, `msw` (3) and `@mswjs/interceptors`, and says
 * which to install when they are missing.
 *
 * They are loaded with `require` (Node's `require` of ES modules, as the CommonJS build does
 * anyway) instead of static imports: a static import of a missing package fails while the module
 * graph is linked, before any code of this package runs, with Node's bare
 * `Cannot find package 'msw'`. `require` returns the same module instances as `import` does, so
 * handlers the user builds with `msw`'s own `http` work with the network built here.
 *
 * @module
 */
import { createRequire } from 'node:module'
import type * as Interceptors from '@mswjs/interceptors/http'
import type * as Msw from 'msw'
import type * as MswExperimental from 'msw/experimental'

/** The optional peers, as loaded. */
export interface MswPeers {
  msw: typeof Msw
  experimental: typeof MswExperimental
  interceptors: typeof Interceptors
}

/** What to run to get them. */
export const INSTALL_HINT = 'npm install -D msw @mswjs/interceptors'

const MISSING = new Set(['MODULE_NOT_FOUND', 'ERR_MODULE_NOT_FOUND', 'ERR_PACKAGE_PATH_NOT_EXPORTED'])

/**
 * Loads the peers.
 * @throws Error naming both peers and {@link INSTALL_HINT} when one of them cannot be found (or is
 * too old to have what is needed), with Node's error as `cause` and its `code` kept; any other
 * loading error as it is.
 */
export function loadMswPeers(): MswPeers {
  const load = createRequire(import.meta.url)
  try {
    return {
      msw: load('msw') as typeof Msw,
      experimental: load('msw/experimental') as typeof MswExperimental,
      interceptors: load('@mswjs/interceptors/http') as typeof Interceptors,
    }
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code
    if (typeof code !== 'string' || !MISSING.has(code)) throw error
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    throw Object.assign(
      new Error(
        `chat-service-sdk/testing/msw needs its optional peer dependencies msw (^3) and @mswjs/interceptors (>=0.45): ${INSTALL_HINT}. ` +
          `Listen mode (chat-service-sdk/testing, fake.listen()) works without them. (${reason})`,
        { cause: error },
      ),
      { code },
    )
  }
}
