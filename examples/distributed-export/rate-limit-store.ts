// The SDK's rate limit shared by every worker through Redis (`rateLimitStore`): when one process
// gets a 429, all of them stop sending until its Retry-After has passed (get/set), and all of them
// send at one learned rate out of one budget (take), instead of each finding the limit with 429s
// of its own. The store of docs/rate-limits.md ("One rate limit across processes"). Redis 6.2 or later.
import type { Redis } from 'ioredis'
import type { RateLimitStore } from 'chat-service-sdk'

/** Keeps the later moment (two workers may meet a 429 at once), and expires with it (PXAT: Redis 6.2+). */
const SET_LATER = `if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1])
  then redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[1]) end`

/**
 * `RateLimitStore.take`, atomically: keeps the newer learned rate (by its `at`), then refills the
 * bucket at the rate asked (on Redis's own clock, so the workers' clocks only matter for the
 * learned rate's `at`) and grants what is above the reserve. Kept a week idle (the SDK starts a first 429
 * from a limit learned up to a week before).
 * ARGV: tokens, reserve, ratePerSecond, burst, learned max, at, recoveryMs ('' when none), accepted.
 * It also counts the requests accepted per second of Redis's clock (this second and the last), to
 * answer what all processes accepted over about the last second.
 */
const TAKE = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'tokens', 'at', 'max', 'learnedAt', 'recoveryMs', 'second', 'accepted', 'acceptedBefore')
if ARGV[5] ~= '' and (not s[4] or tonumber(ARGV[6]) > tonumber(s[4])) then
  s[3], s[4], s[5] = ARGV[5], ARGV[6], ARGV[7]
  redis.call('HSET', KEYS[1], 'max', s[3], 'learnedAt', s[4], 'recoveryMs', s[5])
end
local granted = 0
local want = tonumber(ARGV[1])
if want > 0 then
  local rate, burst = tonumber(ARGV[3]), tonumber(ARGV[4])
  local tokens = tonumber(s[1]) or burst
  local at = tonumber(s[2]) or now
  tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
  granted = math.max(0, math.min(want, math.floor(tokens - tonumber(ARGV[2]))))
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - granted), 'at', now)
end
local second, accepted, before = tonumber(time[1]), tonumber(s[7]) or 0, tonumber(s[8]) or 0
local last = tonumber(s[6]) or second
if second == last + 1 then before, accepted = accepted, 0 elseif second > last + 1 then before, accepted = 0, 0 end
accepted = accepted + (tonumber(ARGV[8]) or 0)
redis.call('HSET', KEYS[1], 'second', second, 'accepted', accepted, 'acceptedBefore', before)
redis.call('PEXPIRE', KEYS[1], 604800000)
local perSecond = accepted + before * (1 - (now % 1000) / 1000)
return { granted, s[3] or false, s[4] or false, s[5] or false, tostring(perSecond) }`

/**
 * A store on two Redis keys, `key` (the pause) and `key:pacing` (the learned rate and its bucket).
 * `maxAgeMs`: how old a value read may be before the SDK reads it again (default 100 ms; 0: before every request).
 */
export function redisRateLimitStore(redis: Redis, key: string, maxAgeMs?: number): RateLimitStore {
  return {
    get: async () => Number((await redis.get(key)) ?? 0), // ms since the epoch; 0: no pause
    set: async (untilEpochMs) => {
      await redis.eval(SET_LATER, 1, key, untilEpochMs)
    },
    take: async ({ tokens, reserve, ratePerSecond, burst, learned, accepted }: RateLimitStore.Take): Promise<RateLimitStore.Grant> => {
      const args = [tokens, reserve, ratePerSecond, burst, learned?.max ?? '', learned?.at ?? '', learned?.recoveryMs ?? '', accepted]
      const [granted, max, at, recoveryMs, perSecond] = (await redis.eval(TAKE, 1, `${key}:pacing`, ...args)) as [
        number,
        ...(string | null)[],
      ]
      const learnedRate = max == null ? null : { max: Number(max), at: Number(at), recoveryMs: Number(recoveryMs) }
      return { tokens: granted, learned: learnedRate, acceptedPerSecond: Number(perSecond) }
    },
    maxAgeMs,
  }
}

/** The same store without `take`, as 0.3 had it: the 429 pause shared, each process pacing on its own. */
export function pauseOnly(store: RateLimitStore): RateLimitStore {
  return { get: () => store.get(), set: (untilEpochMs) => store.set(untilEpochMs), maxAgeMs: store.maxAgeMs }
}
