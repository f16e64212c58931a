/**
 * A `RateLimitStore` with `take`, in memory: what Redis is to several processes, for several
 * clients of one test. It follows the contract of `RateLimitStore.take` (core/options.ts) to the
 * letter, so that the SDK's side of it is tested against what a store must do; the README's Redis
 * store (a Lua script) is tested against a real Redis in test/examples/redis-store.test.ts.
 */
import type { RateLimitStore } from 'chat-service-sdk'

export interface MemoryStore extends RateLimitStore {
  /** The pause, ms since the epoch. */
  pausedUntil: number
  learned: RateLimitStore.LearnedRate | null
  tokens: number | undefined
  takes: RateLimitStore.Take[]
  /** Whether it counts accepted requests and answers `acceptedPerSecond` (step 4 of the contract, optional; on by default). */
  counts: boolean
  take(request: RateLimitStore.Take): Promise<RateLimitStore.Grant>
  /** Makes every later call throw (or recover, with `false`). */
  failing: boolean
}

export function memoryStore(clock: () => number = Date.now): MemoryStore {
  let at = 0
  /** Accepted requests per second of the clock: this second's, and the last one's. */
  let second = 0
  let accepted = 0
  let acceptedBefore = 0
  const store: MemoryStore = {
    pausedUntil: 0,
    learned: null,
    tokens: undefined,
    takes: [],
    counts: true,
    failing: false,
    get() {
      if (store.failing) throw new Error('store down')
      return Promise.resolve(store.pausedUntil)
    },
    set(until) {
      if (store.failing) throw new Error('store down')
      store.pausedUntil = Math.max(store.pausedUntil, until)
      return Promise.resolve()
    },
    take(request: RateLimitStore.Take): Promise<RateLimitStore.Grant> {
      if (store.failing) return Promise.reject(new Error('store down'))
      store.takes.push(request)
      if (request.learned !== undefined && (store.learned === null || request.learned.at > store.learned.at))
        store.learned = request.learned
      let granted = 0
      if (request.tokens > 0) {
        const now = clock()
        const tokens = Math.min(request.burst, (store.tokens ?? request.burst) + (Math.max(0, now - at) * request.ratePerSecond) / 1000)
        granted = Math.max(0, Math.min(request.tokens, Math.floor(tokens - request.reserve)))
        store.tokens = tokens - granted
        at = now
      }
      if (!store.counts) return Promise.resolve({ tokens: granted, learned: store.learned })
      const now = clock()
      const current = Math.floor(now / 1000)
      if (current === second + 1) [acceptedBefore, accepted] = [accepted, 0]
      else if (current > second + 1) [acceptedBefore, accepted] = [0, 0]
      second = Math.max(second, current)
      accepted += request.accepted
      const acceptedPerSecond = accepted + acceptedBefore * (1 - (now % 1000) / 1000)
      return Promise.resolve({ tokens: granted, learned: store.learned, acceptedPerSecond })
    },
  }
  return store
}
