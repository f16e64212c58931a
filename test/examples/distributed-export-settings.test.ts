// The distributed export's BullMQ settings are chosen on purpose (issue 29) and the example's
// README states them: the defaults in config.ts are the README's, and the bound it promises for a
// dead worker's shard (lockDuration + stalledInterval) is what they add up to. The bound itself is
// tested with short settings, on a real Redis, in distributed-export/ (kit.ts and its tests).
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

/** The README, each run of white space one space (its lines are wrapped). */
const README = readFileSync(new URL('../../examples/distributed-export/README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ')

describe('examples/distributed-export: settings', () => {
  it('defaults to the README’s: lock 15 s, stalled checks every 5 s, 2 stalls survived; a dead worker’s shard moves on within 20 s', async () => {
    for (const name of [
      'EXPORT_LOCK_MS',
      'EXPORT_STALLED_INTERVAL_MS',
      'EXPORT_MAX_STALLED_COUNT',
      'EXPORT_WATCH_EVERY_MS',
      'EXPORT_REDIS_DOWN_MS',
    ]) {
      expect(process.env[name], `${name} is set in this process`).toBeUndefined()
    }
    const { settings } = await import('../../examples/distributed-export/config.ts')
    expect(settings).toMatchObject({
      lockDurationMs: 15_000,
      stalledIntervalMs: 5_000,
      maxStalledCount: 2,
      watchEveryMs: 5_000,
      redisDownMs: 60_000,
    })
    // BullMQ's own were 30 s and 30 s: up to a minute before another worker took a dead worker's shard.
    const bound = settings.lockDurationMs + settings.stalledIntervalMs
    expect(bound).toBe(20_000)
    expect(README).toContain('`lockDuration + stalledInterval` of the death (`lockDuration` being the longer): **20 s**')
    expect(settings.lockDurationMs).toBeGreaterThanOrEqual(settings.stalledIntervalMs)
    for (const row of [
      '| `EXPORT_LOCK_MS` | 15000 |',
      '| `EXPORT_STALLED_INTERVAL_MS` | 5000 |',
      '| `EXPORT_MAX_STALLED_COUNT` | 2 |',
      '| `EXPORT_WATCH_EVERY_MS` | 5000 |',
      '| `EXPORT_REDIS_DOWN_MS` | 60000 |',
    ]) {
      expect(README).toContain(row)
    }
    // The producer's bound on a Redis that came back empty: its watch interval plus one lock duration.
    expect(README).toContain('within `EXPORT_WATCH_EVERY_MS + EXPORT_LOCK_MS` (20 s) of Redis answering again')
    expect(settings.watchEveryMs + settings.lockDurationMs).toBe(20_000)
  })
})
