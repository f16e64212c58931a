// examples/distributed-export/night-watch.ts, the producer's watch over a night, against stand-ins
// for Redis and BullMQ's queues: the race the real ones left to chance (seen once in
// test/examples/distributed-export/aof.test.ts on a loaded machine, where the producer then printed
// "Cannot read properties of null (reading 'written')" for a night that had completed), and a Redis
// that stops answering between two of the watch's reads, which the real one cannot be made to do on cue.
import type { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { settings, type NightResult } from '../../examples/distributed-export/config.ts'
import type { NightQueues } from '../../examples/distributed-export/night-state.ts'
import { watchNight } from '../../examples/distributed-export/night-watch.ts'

const { watchEveryMs, redisDownMs } = settings
afterEach(() => {
  settings.watchEveryMs = watchEveryMs
  settings.redisDownMs = redisDownMs
})

/** A Redis whose `INFO` answers with run_id `abc`, and what the watch needs besides its queues. */
const redis = { info: () => Promise.resolve('# Server\r\nrun_id:abc\r\n') } as unknown as Redis
const watchOptions = {
  redis,
  night: 'n1',
  count: 4,
  runId: 'abc',
  checkpointsKey: 'checkpoints',
  hadCheckpoints: false,
  lastError: () => 'connect ECONNREFUSED 127.0.0.1:6379',
  say: () => undefined,
  signal: new AbortController().signal,
}

describe('watchNight', () => {
  it('a night that completes between reading its job and its state: the result is read again, not the copy from before (null)', async () => {
    settings.watchEveryMs = 1 // a short configured delay between looks
    const result: NightResult = { night: 'n1', written: 12, files: ['a.jsonl'] }
    // The first read of the night's job is from just before it completed (BullMQ: no return value
    // yet); its state, asked next, is already `completed`. Every later read is the completed job.
    const reads = [{ returnvalue: null, getState: () => Promise.resolve('completed') }]
    const completed = { returnvalue: result, getState: () => Promise.resolve('completed') }
    const queues = { nights: { getJob: () => Promise.resolve(reads.shift() ?? completed) } } as unknown as NightQueues
    const outcome = await watchNight({ ...watchOptions, queues })
    expect(outcome).toEqual({ kind: 'completed', result })
  })

  it("Redis stops answering between the read of the night's job and the read of its state: unreachable within the bound, not a wait forever", async () => {
    settings.watchEveryMs = 1
    settings.redisDownMs = 200
    // The night's job is read; from then on no command answers (ioredis queues them while the
    // connection is gone, and nothing rejects them): the state asked next, and every later look.
    const never = (): Promise<never> => new Promise<never>(() => undefined)
    const job = { returnvalue: null, getState: never }
    let looks = 0
    const queues = { nights: { getJob: () => (++looks === 1 ? Promise.resolve(job) : never()) } } as unknown as NightQueues
    const silent = { info: () => (looks === 0 ? watchOptions.redis.info() : never()) } as unknown as Redis
    // Unbounded, the watch would wait here for good (the test's timeout would end it).
    const outcome = await watchNight({ ...watchOptions, redis: silent, queues })
    expect(outcome).toEqual({ kind: 'unreachable', forMs: 200, lastError: 'connect ECONNREFUSED 127.0.0.1:6379' })
  })
})
