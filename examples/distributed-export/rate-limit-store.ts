// The SDK's 429 pause shared by every worker through Redis (`rateLimitStore`): when one process
// gets a 429, all of them stop sending until its Retry-After has passed, instead of each one
// finding the limit with 429s of its own.
import type { Redis } from 'ioredis'
import type { RateLimitStore } from 'chat-service-sdk'

/** Keeps the later of the stored moment and the new one (two workers may hit a 429 at once), expiring with it. */
const SET_LATER = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end`

export function redisRateLimitStore(redis: Redis, key: string): RateLimitStore {
  return {
    async get() {
      return Number((await redis.get(key)) ?? 0) // ms since the epoch; 0: no pause
    },
    async set(untilEpochMs) {
      const ttlMs = Math.max(1, Math.ceil(untilEpochMs - Date.now()))
      await redis.eval(SET_LATER, 1, key, String(untilEpochMs), String(ttlMs))
    },
  }
}
