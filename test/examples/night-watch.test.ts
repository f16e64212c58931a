// examples/distributed-export/night-watch.ts, the producer's watch over a night, against stand-ins
// for Redis and BullMQ's queues: the race the real ones left to chance (seen once in
// test/examples/distributed-export/aof.test.ts on a loaded machine, where the producer then printed
// "Cannot read properties of null (reading 'written')" for a night that had completed).
import type { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { settings, type NightResult } from '../../examples/distributed-export/config.ts'
import type { NightQueues } from '../../examples/distributed-export/night-state.ts'
import { watchNight } from '../../examples/distributed-export/night-watch.ts'

const watchEveryMs = settings.watchEveryMs
afterEach(() => {
  settings.watchEveryMs = watchEveryMs
})

describe('watchNight', () => {
  it('a night that completes between reading its job and its state: the result is read again, not the copy from before (null)', async () => {
    settings.watchEveryMs = 1 // a short configured delay between looks
    const result: NightResult = { night: 'n1', written: 12, files: ['a.jsonl'] }
    // The first read of the night's job is from just before it completed (BullMQ: no return value
    // yet); its state, asked next, is already `completed`. Every later read is the completed job.
    const reads = [{ returnvalue: null, getState: () => Promise.resolve('completed') }]
    const completed = { returnvalue: result, getState: () => Promise.resolve('completed') }
    const queues = { nights: { getJob: () => Promise.resolve(reads.shift() ?? completed) } } as unknown as NightQueues
    const redis = { info: () => Promise.resolve('# Server\r\nrun_id:abc\r\n') } as unknown as Redis
    const outcome = await watchNight({
      redis,
      queues,
      night: 'n1',
      count: 4,
      runId: 'abc',
      checkpointsKey: 'checkpoints',
      hadCheckpoints: false,
      lastError: () => undefined,
      say: () => undefined,
      signal: new AbortController().signal,
    })
    expect(outcome).toEqual({ kind: 'completed', result })
  })
})
