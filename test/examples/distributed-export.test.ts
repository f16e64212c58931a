// examples/distributed-export/ as its README runs it: a real Redis (scripts/redis.ts: Debian's
// redis-server, installed when missing and root), the fake service listening, worker processes
// and a producer, all child processes running the example from source. One worker is killed with
// SIGKILL in the middle of its shard; BullMQ finds the job stalled and another worker resumes it
// from the position saved in the job, so the shard files of the night hold exactly the messages of
// a single-process export, each once. The next night writes only the messages added since. Under
// the fake's rate limit, the 429 pause shared through Redis (`rateLimitStore`) makes the workers
// stop together: far fewer 429s than when each one pauses on its own.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChatServiceClient, shardOf } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type FakeChatService, type FakeServerHandle } from 'chat-service-sdk/testing'
import { startRedis, type RunningRedis } from '../../scripts/redis.ts'

const EXAMPLE = fileURLToPath(new URL('../../examples/distributed-export/', import.meta.url))
const FROM_SOURCE = fileURLToPath(new URL('../helpers/sdk-from-source.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SHARDS = 4
const COMPANY = 'comp_1'

/** A child process of the example, its output kept line by line. */
interface Started {
  readonly child: ChildProcess
  readonly lines: string[]
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>
}

const children: Started[] = []
const cleanup: (() => Promise<void>)[] = []
let redis: RunningRedis
let dir: string

beforeAll(async () => {
  redis = await startRedis() // installs redis-server first if it is missing (as root), else says how
  dir = await mkdtemp(join(tmpdir(), 'distributed-export-'))
}, 300_000)

afterAll(async () => {
  for (const started of children) if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL')
  await Promise.all(children.map((started) => started.exit))
  for (const step of cleanup.reverse()) await step()
  await redis.stop()
  await rm(dir, { recursive: true, force: true })
})

function start(file: string, args: readonly string[], env: Record<string, string>): Started {
  const child = spawn(process.execPath, ['--no-warnings', '--import', FROM_SOURCE, join(EXAMPLE, file), ...args], {
    cwd: ROOT,
    env: { ...process.env, CHAT_SERVICE_LOG: 'error', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(line))
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exit = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
    output: `${lines.join('\n')}\n${stderr}`,
  }))
  const started = { child, lines, exit }
  children.push(started)
  return started
}

/** Resolves once `check` holds (every 10 ms); rejects after `ms`, showing `output()`. */
async function until(check: () => boolean | Promise<boolean>, output: () => string, ms = 30_000): Promise<void> {
  const deadline = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`condition not met in ${ms} ms; output so far:\n${output()}`)
    await sleep(10)
  }
}

const allOutput = (): string => children.map((started) => started.lines.join('\n')).join('\n')

/** The environment of the example's processes: this Redis, this fake, these settings. */
function environment(server: FakeServerHandle, prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  const { baseUrl, keyId, keySecret } = server.clientOptions()
  return {
    REDIS_URL: redis.url,
    EXPORT_PREFIX: prefix,
    CHAT_SERVICE_BASE_URL: baseUrl,
    CHAT_SERVICE_KEY_ID: keyId,
    CHAT_SERVICE_KEY_SECRET: keySecret,
    ...extra,
  }
}

async function startWorkers(env: Record<string, string>): Promise<Started[]> {
  const workers = Array.from({ length: SHARDS }, () => start('worker.ts', [], env))
  await until(() => workers.every((worker) => worker.lines.some((line) => line.includes('ready'))), allOutput)
  return workers
}

async function night(env: Record<string, string>, name: string, out: string): Promise<void> {
  const producer = start('producer.ts', ['--out', out, '--shards', String(SHARDS), '--night', name], env)
  const exit = await producer.exit
  expect(exit, exit.output).toMatchObject({ code: 0, signal: null })
}

/** The lines of every file of `out` whose name starts with `night`. */
async function linesOf(out: string, nightName: string): Promise<string[]> {
  const files = (await readdir(out)).filter((file) => file.startsWith(`${nightName}-shard-`))
  expect(files).toHaveLength(SHARDS)
  const texts = await Promise.all(files.map((file) => readFile(join(out, file), 'utf8')))
  return texts.flatMap((text) => text.split('\n').slice(0, -1))
}

async function serve(fake: FakeChatService): Promise<FakeServerHandle> {
  const server = await fake.listen()
  cleanup.push(() => server.close())
  return server
}

describe('examples/distributed-export: BullMQ workers on a real Redis', () => {
  it(
    'a worker killed mid-shard is resumed by another from its saved position; the shards equal one export; the next night only the new',
    { timeout: 60_000 },
    async () => {
      const seed = generateDataset({ seed: 17, conversations: 200, messages: 12_000 })
      // 10 ms a request: a shard takes some 100 ms of pages before the held one, against a save every 20 ms.
      const fake = createFakeChatService({ seed, latencyMs: 10 })
      const server = await serve(fake)
      const env = environment(server, 'kill', { EXPORT_SAVE_EVERY_MS: '20', EXPORT_LOCK_MS: '3000', EXPORT_STALLED_INTERVAL_MS: '1000' })
      const out = join(dir, 'kill')

      // The single-process export the shards must add up to.
      const client = new ChatServiceClient(server.clientOptions())
      const reference: string[] = []
      for await (const message of client.conversations.messages.listAll({ concurrency: 8 })) reference.push(JSON.stringify(message))
      await client.close()
      expect(reference).toHaveLength(12_000)
      fake.clearRequests() // from here on, the log holds the workers' requests only

      // The victim: shard 0. Its page of a conversation 4/5 of the way through the shard is held back
      // for 3 s, so that shard 0 cannot finish before the kill, and has saved positions before it.
      const victim = 0
      const mine = fake.listConversations(COMPANY).filter((conversation) => shardOf(conversation.id, SHARDS) === victim)
      const held = mine[Math.floor(mine.length * 0.8)]!
      const heldPath = `/rest/v1/conversations/${held.id}/messages`
      fake.failNext(1, { delayMs: 30_000, match: { method: 'GET', path: heldPath } })

      await startWorkers(env)
      const producer = start('producer.ts', ['--out', out, '--shards', String(SHARDS), '--night', 'n1'], env)
      const connection = new Redis(redis.url, { maxRetriesPerRequest: null })
      const shardJobs = new Queue('export-shard', { connection, prefix: 'kill' })
      cleanup.push(async () => {
        await shardJobs.close()
        connection.disconnect()
      })
      const jobId = `night-n1-shard-${victim}-of-${SHARDS}`
      const savedWritten = async (): Promise<number> =>
        ((await shardJobs.getJob(jobId))?.data as { saved: { written: number } | null } | undefined)?.saved?.written ?? 0
      // Evidence, not a sleep: the held request has come, and the job holds a saved position.
      await until(async () => fake.requests.some((request) => request.path === heldPath) && (await savedWritten()) > 0, allOutput)
      const runner = children.find((started) => started.lines.some((line) => line.includes(`shard ${victim}/${SHARDS} of n1: started`)))!
      runner.child.kill('SIGKILL')
      await runner.exit
      const savedAtKill = await savedWritten()
      expect(savedAtKill).toBeGreaterThan(0)
      expect(savedAtKill).toBeLessThan(mine.reduce((sum, conversation) => sum + conversation.message_count, 0))

      const first = await producer.exit
      expect(first, first.output).toMatchObject({ code: 0, signal: null })
      // Another worker took the stalled job and went on from the saved position.
      const resumed = children.filter(
        (started) =>
          started !== runner &&
          started.lines.some((line) => line.includes(`shard ${victim}/${SHARDS} of n1: resuming after ${savedAtKill} messages`)),
      )
      expect(resumed, allOutput()).toHaveLength(1)
      const job = await shardJobs.getJob(jobId)
      expect(job?.stalledCounter).toBe(1)

      const n1 = await linesOf(out, 'n1')
      expect(new Set(n1).size).toBe(n1.length) // no message twice
      expect(n1.length).toBe(reference.length)
      expect(new Set(n1)).toEqual(new Set(reference)) // none lost

      // Night 2: three messages in each of 8 conversations (shard 0's included); only they are written.
      const grown = fake.listConversations(COMPANY).filter((_, index) => index % 25 === 3)
      const added = grown.flatMap((conversation) => fake.appendMessages(COMPANY, conversation.id, 3).map((message) => message.id))
      expect(grown.some((conversation) => shardOf(conversation.id, SHARDS) === victim)).toBe(true)
      await night(env, 'n2', out)
      const n2 = (await linesOf(out, 'n2')).map((line) => (JSON.parse(line) as { id: string }).id)
      expect(n2.toSorted()).toEqual(added.toSorted())
    },
  )

  it(
    'a 429 one worker meets pauses every worker through the Redis store (and only its own worker without it)',
    { timeout: 60_000 },
    async () => {
      // 600 conversations at 50 ms a request: some 2 s of work for 16 requests in flight, so that
      // without the store the other workers are still sending while the one that met the 429 waits.
      const seed = generateDataset({ seed: 29, conversations: 600, messages: 6_000 })
      const sentInPause: Record<string, number> = {}
      for (const store of ['off', 'redis']) {
        const fake = createFakeChatService({ seed, latencyMs: 50 })
        const server = await serve(fake)
        const env = environment(server, `pause-${store}`, { EXPORT_RATE_LIMIT_STORE: store })
        const workers = await startWorkers(env)
        // When each request reached the fake (sampled every 5 ms: the log has no clock of its own).
        const seenAt: number[] = []
        const clock = setInterval(() => {
          while (seenAt.length < fake.requests.length) seenAt.push(performance.now())
        }, 5)
        const out = join(dir, `pause-${store}`)
        const producer = start('producer.ts', ['--out', out, '--shards', String(SHARDS), '--night', 'n1'], env)
        await until(() => fake.requests.length >= 60, allOutput)
        // One worker's next message page gets a 429 asking for 3 s.
        fake.failNext(1, {
          status: 429,
          headers: { 'retry-after': '3' },
          match: { method: 'GET', path: /^\/rest\/v1\/conversations\/[^/]+\/messages$/ },
        })
        const exit = await producer.exit
        clearInterval(clock)
        expect(exit, exit.output).toMatchObject({ code: 0, signal: null })
        expect(await linesOf(out, 'n1')).toHaveLength(6_000) // every message, the 429 notwithstanding
        const refused = fake.requests.findIndex((request) => request.status === 429)
        expect(refused).toBeGreaterThan(0)
        const pausedAt = seenAt[refused]!
        // Between 0.6 s and 2.4 s after it (the pause lasts 3 s from when the worker read the 429;
        // the others read the store at least every 100 ms): requests sent by anyone.
        sentInPause[store] = seenAt.filter((at) => at > pausedAt + 600 && at < pausedAt + 2_400).length
        for (const worker of workers) worker.child.kill('SIGTERM')
        await Promise.all(workers.map((worker) => worker.exit))
      }
      expect(sentInPause['off']).toBeGreaterThan(50) // the other three workers went on
      expect(sentInPause['redis']).toBe(0) // all four waited
    },
  )
})
