// The SDK's 429 pause shared by every worker through Redis (`rateLimitStore`): when one process
// gets a 429, all of them stop sending until its Retry-After has passed, instead of each one
// finding the limit with 429s of its own. The README's store ("One rate limit across processes").
import type { Redis } from 'ioredis'
import type { RateLimitStore } from 'chat-service-sdk'

/** Keeps the later moment (two workers may meet a 429 at once), and expires with it (PXAT: Redis 6.2+). */
const SET_LATER = `if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1])
  then redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[1]) end`

/** `maxAgeMs`: how old a value read may be before the SDK reads it again (default 100 ms; 0: before every request). */
export function redisRateLimitStore(redis: Redis, key: string, maxAgeMs?: number): RateLimitStore {
  return {
    get: async () => Number((await redis.get(key)) ?? 0), // ms since the epoch; 0: no pause
    set: async (untilEpochMs) => {
      await redis.eval(SET_LATER, 1, key, untilEpochMs)
    },
    maxAgeMs,
  }
}
