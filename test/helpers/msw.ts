/**
 * msw 3 harness for the core tests, on top of the testing kit's `createMswNetwork` (msw's
 * `setupServer()` does not see undici traffic; the kit's network intercepts it at the socket level).
 * The kit's defaults apply: `onUnhandledFrame: 'error'`, so a request no handler matches fails (the
 * SDK sees a network error), and `afterEach` fails the test that made it; `quiet: true`.
 *
 * msw limitation: a fetch `Request` cannot carry a body on GET, so `body` is '' for GET requests
 * here. GET bodies are checked at the wire instead (see wire.ts).
 */
import type { RequestHandler } from 'msw'
import type { HttpNetworkFrameEventMap } from 'msw/experimental'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { createMswNetwork } from 'chat-service-sdk/testing/msw'

/** msw types the network's events loosely (`any`); these are the HTTP events it emits. */
type RequestEvent = HttpNetworkFrameEventMap['request:start']

/** One request as msw saw it. */
export interface SeenRequest {
  readonly method: string
  readonly url: URL
  readonly headers: Record<string, string>
  /** Body text; always '' on GET (msw limitation). */
  readonly body: string
}

export interface MswHarness {
  /** Adds handlers for the current test (reset after each test). */
  use(...handlers: RequestHandler[]): void
  /** Every request that reached the network in the current test, in order, with its body. */
  requests(): Promise<SeenRequest[]>
  /** How many requests reached the network in the current test (handled or not). */
  count(): number
  /** Returns and forgets the unhandled requests seen so far ("METHOD url"), so a test can expect one. */
  takeUnhandled(): string[]
}

/** Registers beforeAll/afterEach/afterAll hooks in the calling test file and returns the harness. */
export function setupMsw(): MswHarness {
  const network = createMswNetwork([])
  let seen: Promise<SeenRequest>[] = []
  let unhandled: string[] = []

  network.events.on('request:start', (event: RequestEvent) => {
    const request = event.request.clone()
    seen.push(
      request.text().then((body: string) => ({
        method: request.method,
        url: new URL(request.url),
        headers: Object.fromEntries(request.headers),
        body,
      })),
    )
  })
  network.events.on('request:unhandled', (event: RequestEvent) => {
    unhandled.push(`${event.request.method} ${event.request.url}`)
  })

  beforeAll(() => {
    network.enable()
  })
  afterEach(() => {
    network.resetHandlers()
    const leftover = unhandled
    seen = []
    unhandled = []
    if (leftover.length > 0) throw new Error(`Unhandled request(s) reached msw: ${leftover.join(', ')}`)
  })
  afterAll(() => {
    network.disable()
  })

  return {
    use: (...handlers) => {
      network.use(...handlers)
    },
    requests: () => Promise.all(seen),
    count: () => seen.length,
    takeUnhandled: () => {
      const out = unhandled
      unhandled = []
      return out
    },
  }
}
