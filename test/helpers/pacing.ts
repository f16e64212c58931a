// A client that has been working before the 429 a test is about. From its first 429 the client
// paces at a rate learned from what the service accepted in the second before it
// (src/internal/rate-limit/learner.ts). A client whose very first request is refused has accepted
// nothing, so it paces at the least rate, 0.5 requests a second: its retry and every call after it
// wait some 2 s, whatever the 429 asked for. That wait is real seconds of the suite, and it hides
// the wait a test means to show: a 1 s `Retry-After` ignored, or a pause not shared, still left the
// next request 2 s late, and such tests passed with the feature broken. After `acceptSome`, the
// first 429 lowers the rate to 0.8 × `count` a second (16 for the default 20, a request each ~60 ms):
// what the test waits for is then the wait under test.
import { vi } from 'vitest'
import type { ChatServiceClient } from 'chat-service-sdk'

/** Requests accepted before the 429: 20 in well under a second, a learned rate of 16 a second. */
export const ACCEPTED_BEFORE_429 = 20

/**
 * Makes `count` calls (`agents.list`, tagged with `headers` when given) that the server must
 * accept, one after another; the test clears the server's record of them afterwards if it counts.
 */
export async function acceptSome(
  client: ChatServiceClient,
  { count = ACCEPTED_BEFORE_429, headers }: { count?: number; headers?: Record<string, string> } = {},
): Promise<void> {
  for (let i = 0; i < count; i++) await client.agents.list({}, headers === undefined ? {} : { headers })
}

/**
 * Runs `work` (calls to a listening fake or loopback server) on a fake clock that moves 1 ms for
 * each real turn of the event loop, until `work` settles. Every timer but `setImmediate` is faked,
 * as TESTING.md says, and `Date` with them: the client's pacing and pauses, undici's timers and the
 * fake's rate limiter (which reads `Date.now()`) all keep the one clock, while the requests still
 * travel on real sockets, one turn of the loop at a time. A paced export whose rate climbs for
 * seconds (pacing's probing doubles it each half second) then takes as long as its requests take
 * to send, not as long as the climb: what it does is the same, in fake milliseconds.
 *
 * Only what happens on the event loop keeps to that clock. While `work` waits on something off the
 * loop, the loop spins and the fake clock runs on: zlib's thread pool, which decodes a compressed
 * response, took a varying number of fake milliseconds, more on a busy machine, and with it the
 * 429s a paced export met (pacing-store's two workers: 18 to 21 refused of 127 to 130 requests and
 * 2.9 to 3.8 fake seconds over six runs, quiet and loaded; once 40 of 149 under load). Uncompressed
 * (`compression: false` on the fake), the same export was the same in every run: 22 refused of
 * 131 in 3,863-3,866 fake ms, quiet or with three busy loops on its core. So the servers `work`
 * calls answer uncompressed.
 */
export async function onFakeClock<T>(work: () => PromiseLike<T>): Promise<T> {
  vi.useFakeTimers({ toNotFake: ['setImmediate', 'clearImmediate'], now: Date.now() })
  try {
    let settled = false
    const result = Promise.resolve(work()).finally(() => {
      settled = true
    })
    // Handled here so that a rejection before the loop ends is not reported as unhandled; `await result` below rethrows it.
    result.catch(() => undefined)
    while (!settled) {
      await new Promise((resolve) => setImmediate(resolve))
      await vi.advanceTimersByTimeAsync(1)
    }
    return await result
  } finally {
    vi.useRealTimers()
  }
}
