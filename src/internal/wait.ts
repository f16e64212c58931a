/**
 * The SDK's one way to wait (retry backoff, `Retry-After`, the 429 pause).
 *
 * It calls the global `setTimeout`, looked up at each wait, and not `node:timers/promises`: test
 * runners' fake timers (`vi.useFakeTimers()`, `jest.useFakeTimers()`) replace the global and do not
 * reach `node:timers/promises`, so with this a user's test can skip a 20 s `Retry-After` by advancing
 * its fake clock instead of sleeping through it.
 */

/**
 * Resolves when `settled` does (if given) or after `ms`, whichever comes first; rejects with
 * `signal.reason` as soon as `signal` aborts (at once if it has). `settled` must never reject.
 */
export function waitFor(settled: Promise<void> | undefined, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error)
      return
    }
    const done = (): void => {
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      resolve()
    }
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal.reason as Error)
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', onAbort, { once: true })
    if (settled !== undefined) void settled.then(done)
  })
}
