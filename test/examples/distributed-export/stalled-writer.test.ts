// examples/distributed-export/shard-job.ts, in process and step by step: an attempt that lost its
// job (its worker cut off from Redis, or paused, past lockDuration) while another attempt took it
// over must neither write into the shard's file nor move the job's saved position. The first
// test is the interleaving behind the duplicate line once seen in aof.test.ts (Redis down while a
// page was in flight; another worker took the job, cut the file back and wrote on; then the page
// came back); the second, a save whose lock check passed just before Redis went away, landing once
// Redis was back (seen in the same test's logs). A real Redis and BullMQ's own job objects, but no
// worker: the test hands the job from one attempt to the other (its lock key), so the order of
// events is the test's, not the timers'.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Job, Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { Agent, type Dispatcher } from 'undici'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type FakeChatService, type FakeServerHandle } from 'chat-service-sdk/testing'
import type { ShardJobData, ShardResult } from '../../../examples/distributed-export/config.ts'
import { startRedis, type RunningRedis } from '../../../scripts/redis.ts'
import { COMPANY, referenceExport } from './kit.ts'

// A save after every line, one page in flight at a time: config.ts reads these when it is imported
// (afresh here: another file of this vitest worker may have imported it with other settings).
vi.stubEnv('EXPORT_SAVE_EVERY_MS', '0')
vi.stubEnv('EXPORT_CONCURRENCY', '1')
vi.resetModules()
const { exportShard, LockLostError } = await import('../../../examples/distributed-export/shard-job.ts')

let server: RunningRedis | undefined
let redis: Redis
let queue: Queue<ShardJobData, ShardResult>
let dir: string
beforeAll(async () => {
  server = await startRedis() // installs redis-server first if it is missing (as root), else says how
  redis = new Redis(server.url, { maxRetriesPerRequest: null })
  queue = new Queue('export-shard', { connection: redis, prefix: 'stalled-writer' })
  dir = await mkdtemp(join(tmpdir(), 'stalled-writer-'))
}, 300_000)
afterAll(async () => {
  await queue.close()
  redis.disconnect()
  await server?.stop()
  await rm(dir, { recursive: true, force: true })
  vi.unstubAllEnvs()
})

/** A first night's shard job (one shard: every conversation), in Redis, its lock held by `attempt-1` as a worker's would be. */
async function shardJob(name: string): Promise<{ id: string; out: string; takeOver: (token: string) => Promise<void> }> {
  const out = join(dir, `${name}.jsonl`)
  const data: ShardJobData = { night: name, shard: { index: 0, count: 1 }, out, since: null, saved: null }
  const job = await queue.add('shard', data, { jobId: name })
  const lock = `${queue.qualifiedName}:${job.id!}:lock`
  await redis.set(lock, 'attempt-1')
  // The lock expired, BullMQ found the job stalled, and another worker took it with its own token.
  return {
    id: job.id!,
    out,
    takeOver: async (token) => {
      await redis.set(lock, token)
    },
  }
}

/** The job as an attempt sees it, read from Redis at the attempt's start, as a worker gets it. */
async function attemptOf(id: string): Promise<Job<ShardJobData, ShardResult>> {
  const job = await Job.fromId<ShardJobData, ShardResult>(queue, id)
  if (job === undefined) throw new Error(`job ${id} is not in Redis`)
  return job
}

/** A dispatcher that holds the requests of `path` until opened: the worker's page in flight, not coming back yet. */
function holding(path: string): { dispatcher: Dispatcher; open: () => void; close: () => Promise<void> } {
  let release: () => void = () => undefined
  const opened = new Promise<void>((resolve) => (release = resolve))
  const agent = new Agent()
  const dispatcher = agent.compose((dispatch) => (options, handler) => {
    if (!options.path.startsWith(path)) return dispatch(options, handler)
    void opened.then(() => dispatch(options, handler))
    return true
  })
  return {
    dispatcher,
    open: () => {
      release()
    },
    close: () => agent.close(),
  }
}

/** The fake, listening, with a small night of messages; and every message as a single export writes it. */
async function service(seed: number): Promise<{ fake: FakeChatService; server: FakeServerHandle; reference: string[] }> {
  const fake = createFakeChatService({ seed: generateDataset({ seed, conversations: 12, messages: 240 }) })
  const server = await fake.listen()
  return { fake, server, reference: await referenceExport(server) }
}

/** The lines of `out`, asserted to be `reference`, each once (naming any line written twice, with what the attempts said). */
async function expectExactly(out: string, reference: readonly string[], log: readonly string[]): Promise<void> {
  const lines = (await readFile(out, 'utf8')).split('\n').slice(0, -1)
  const twice = lines.filter((line, index) => lines.indexOf(line) !== index)
  expect(twice, `lines written twice; the attempts said:\n${log.join('\n')}`).toEqual([])
  expect(lines).toHaveLength(reference.length)
  expect(new Set(lines)).toEqual(new Set(reference))
}

describe('examples/distributed-export: a shard attempt that lost its job', () => {
  it('writes nothing once its held page comes back after another attempt cut the file back and finished the shard', async () => {
    const { fake, server, reference } = await service(41)
    const { id, out, takeOver } = await shardJob('held-page')
    const log: string[] = []

    // Attempt 1 writes and saves the messages of the conversations before the held one, then waits
    // for the held one's page: its worker is cut off from Redis (or paused), its lock expires.
    const conversations = fake.listConversations(COMPANY)
    const heldId = conversations[Math.floor(conversations.length / 2)]!.id
    const before = reference.findIndex((line) => (JSON.parse(line) as { conversation_id: string }).conversation_id === heldId)
    expect(before).toBeGreaterThan(0)
    const held = holding(`/rest/v1/conversations/${heldId}/messages`)
    const first = new ChatServiceClient({ ...server.clientOptions(), dispatcher: held.dispatcher })
    let reached: () => void = () => undefined
    const waiting = new Promise<void>((resolve) => (reached = resolve))
    const firstEnded = exportShard(first, redis, await attemptOf(id), 'attempt-1', undefined, (line) => {
      log.push(`attempt 1: ${line}`)
      if (line.startsWith(`saved: ${before} messages,`)) reached()
    }).then(
      () => 'completed',
      (error: unknown) => error,
    )
    await waiting

    // Attempt 2 takes the job, resumes from the saved position and finishes the shard.
    await takeOver('attempt-2')
    const second = new ChatServiceClient(server.clientOptions())
    const result = await exportShard(second, redis, await attemptOf(id), 'attempt-2', undefined, (line) => log.push(`attempt 2: ${line}`))
    expect(result.written).toBe(reference.length)
    expect(log.some((line) => line.startsWith(`attempt 2: resuming after ${before} messages`))).toBe(true)

    // Attempt 1's page comes back: it must find the job gone before writing a line of it.
    held.open()
    expect(await firstEnded).toBeInstanceOf(LockLostError)
    await Promise.all([first.close(), second.close(), held.close(), server.close()])
    await expectExactly(out, reference, log)
  })

  it('does not move the saved position once the job is another attempt’s, when the lock was lost right after its check', async () => {
    const { server, reference } = await service(43)
    const { id, out, takeOver } = await shardJob('late-save')
    const log: string[] = []
    const job = await attemptOf(id)
    // The third save's lock check passes; then Redis goes away, and is back only once the lock has
    // expired and another worker has taken the job: the save's data reaches Redis after that.
    let checks = 0
    let dataAtTakeOver: string | null = null
    const extendLock = job.extendLock.bind(job)
    job.extendLock = async (token, duration) => {
      const answer = await extendLock(token, duration)
      if (++checks === 3) {
        dataAtTakeOver = await redis.hget(`${queue.qualifiedName}:${id}`, 'data')
        await takeOver('attempt-2')
      }
      return answer
    }
    const client = new ChatServiceClient(server.clientOptions())
    const ended = await exportShard(client, redis, job, 'attempt-1', undefined, (line) => log.push(`attempt 1: ${line}`)).then(
      () => 'completed',
      (error: unknown) => error,
    )
    expect(ended, log.join('\n')).toBeInstanceOf(LockLostError)
    expect(log.filter((line) => line.includes('saved:'))).toHaveLength(2)
    // The job's data is as the takeover found it: attempt 2 resumes from where attempt 1 last saved as the job's owner.
    expect(await redis.hget(`${queue.qualifiedName}:${id}`, 'data')).toBe(dataAtTakeOver)

    // And attempt 2, from there, finishes the shard exactly.
    const result = await exportShard(client, redis, await attemptOf(id), 'attempt-2', undefined, (line) => log.push(`attempt 2: ${line}`))
    expect(result.written).toBe(reference.length)
    await Promise.all([client.close(), server.close()])
    await expectExactly(out, reference, log)
  })
})
