// examples/distributed-export/ as its README runs it: a real Redis (scripts/redis.ts: Debian's
// redis-server, installed when missing and root), the fake service listening, worker processes
// and a producer, all child processes running the example from source. One worker is killed with
// SIGKILL in the middle of its shard; BullMQ finds the job stalled and an idle worker resumes it,
// within the bound the README states (lockDuration + stalledInterval), from the position saved in
// the job, so the shard files of the night hold exactly the messages of a single-process export,
// each once. The next night writes only the messages added since. A shard whose worker dies more
// often than maxStalledCount fails the night, and the producer says which, why, and how to resume;
// running it again resumes exactly. Redis restarted mid-night: without persistence the producer
// fails on its own saying what was lost (and the night run again is exact); with AOF the night goes
// on; a Redis that stays down ends the wait too. Under the fake's rate limit, the 429 pause shared
// through Redis (`rateLimitStore`) makes the workers stop together: far fewer 429s than when each
// one pauses on its own.
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
function environment(
  server: FakeServerHandle,
  prefix: string,
  extra: Record<string, string> = {},
  redisUrl = redis.url,
): Record<string, string> {
  const { baseUrl, keyId, keySecret } = server.clientOptions()
  return {
    REDIS_URL: redisUrl,
    EXPORT_PREFIX: prefix,
    CHAT_SERVICE_BASE_URL: baseUrl,
    CHAT_SERVICE_KEY_ID: keyId,
    CHAT_SERVICE_KEY_SECRET: keySecret,
    ...extra,
  }
}

async function startWorkers(env: Record<string, string>, count = SHARDS): Promise<Started[]> {
  const workers = Array.from({ length: count }, () => start('worker.ts', [], env))
  await until(() => workers.every((worker) => worker.lines.some((line) => line.includes('ready'))), allOutput, 60_000)
  return workers
}

/** Stops `workers` as an operator would (SIGTERM), so that a test leaves none running for the next. */
async function stopWorkers(workers: readonly Started[]): Promise<void> {
  for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM')
  await Promise.all(workers.map((worker) => worker.exit))
}

async function night(env: Record<string, string>, name: string, out: string): Promise<string> {
  const producer = start('producer.ts', ['--out', out, '--shards', String(SHARDS), '--night', name], env)
  const exit = await producer.exit
  expect(exit, exit.output).toMatchObject({ code: 0, signal: null })
  return exit.output
}

/** Settings that make stalls, watches and give-ups take seconds, not minutes (README.md, "Settings"). */
const FAST = {
  EXPORT_SAVE_EVERY_MS: '20',
  EXPORT_LOCK_MS: '3000',
  EXPORT_STALLED_INTERVAL_MS: '1000',
  EXPORT_WATCH_EVERY_MS: '200',
  EXPORT_REDIS_DOWN_MS: '2000',
}

/** The single-process export the shards of a first night must add up to: every message, as JSON. */
async function referenceExport(server: FakeServerHandle): Promise<string[]> {
  const client = new ChatServiceClient(server.clientOptions())
  const reference: string[] = []
  for await (const message of client.conversations.messages.listAll({ concurrency: 8 })) reference.push(JSON.stringify(message))
  await client.close()
  return reference
}

/** Asserts that the night's files hold exactly `reference`, each message once. */
async function expectExactly(out: string, nightName: string, reference: readonly string[]): Promise<void> {
  const lines = await linesOf(out, nightName)
  expect(new Set(lines).size).toBe(lines.length) // no message twice
  expect(lines.length).toBe(reference.length)
  expect(new Set(lines)).toEqual(new Set(reference)) // none lost
}

/** The worker of `workers`, alive and not in `skip`, whose log says it started or resumed `shard` of `nightName`. */
function runnerOf(workers: readonly Started[], shard: number, nightName: string, skip: readonly Started[] = []): Started | undefined {
  return workers.find(
    (started) =>
      !skip.includes(started) &&
      started.child.exitCode === null &&
      started.child.signalCode === null &&
      started.lines.some((line) => new RegExp(`shard ${shard}/${SHARDS} of ${nightName}: (started|resuming)`).test(line)),
  )
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
    'a worker killed mid-shard is picked up by an idle one within lockDuration + stalledInterval, resumed from its saved position; the shards equal one export; the next night only the new',
    { timeout: 120_000 },
    async () => {
      const seed = generateDataset({ seed: 17, conversations: 200, messages: 12_000 })
      // 10 ms a request: a shard takes some 100 ms of pages before the held one, against a save every 20 ms.
      const fake = createFakeChatService({ seed, latencyMs: 10 })
      const server = await serve(fake)
      const env = environment(server, 'kill', FAST)
      const out = join(dir, 'kill')

      const reference = await referenceExport(server)
      expect(reference).toHaveLength(12_000)
      fake.clearRequests() // from here on, the log holds the workers' requests only

      // The victim: shard 0. Its page of a conversation 4/5 of the way through the shard is held back
      // for 30 s, so that shard 0 cannot finish before the kill, and has saved positions before it.
      const victim = 0
      const mine = fake.listConversations(COMPANY).filter((conversation) => shardOf(conversation.id, SHARDS) === victim)
      const held = mine[Math.floor(mine.length * 0.8)]!
      const heldPath = `/rest/v1/conversations/${held.id}/messages`
      fake.failNext(1, { delayMs: 30_000, match: { method: 'GET', path: heldPath } })

      // One worker more than shards: an idle one takes the dead worker's job as soon as it is free.
      const workers = await startWorkers(env, SHARDS + 1)
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
      const runner = runnerOf(workers, victim, 'n1')!
      const killedAt = Date.now()
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
      // Picked up within the bound README.md states: lockDuration (3 s here) + stalledInterval (1 s),
      // and 1 s for timers of a loaded machine. BullMQ's defaults (30 s + 30 s) took up to a minute.
      // processedOn: when the resumed attempt began (the worker's clock, the same machine's).
      const pickedUpAfter = (job?.processedOn ?? Number.POSITIVE_INFINITY) - killedAt
      expect(pickedUpAfter).toBeGreaterThan(0)
      expect(pickedUpAfter, `picked up ${pickedUpAfter} ms after the kill`).toBeLessThanOrEqual(3_000 + 1_000 + 1_000)

      await expectExactly(out, 'n1', reference)

      // Night 2: three messages in each of 8 conversations (shard 0's included); only they are written.
      const grown = fake.listConversations(COMPANY).filter((_, index) => index % 25 === 3)
      const added = grown.flatMap((conversation) => fake.appendMessages(COMPANY, conversation.id, 3).map((message) => message.id))
      expect(grown.some((conversation) => shardOf(conversation.id, SHARDS) === victim)).toBe(true)
      await night(env, 'n2', out)
      const n2 = (await linesOf(out, 'n2')).map((line) => (JSON.parse(line) as { id: string }).id)
      expect(n2.toSorted()).toEqual(added.toSorted())
      await stopWorkers(workers)
    },
  )

  it(
    'a shard whose worker dies more often than maxStalledCount fails the night: the producer says which shard, why, its stalls and saved position, and how to resume; run again, the night is exact',
    { timeout: 120_000 },
    async () => {
      const seed = generateDataset({ seed: 23, conversations: 120, messages: 6_000 })
      const fake = createFakeChatService({ seed, latencyMs: 10 })
      const server = await serve(fake)
      // One stall allowed: the second fails the shard.
      const env = environment(server, 'stall', { ...FAST, EXPORT_MAX_STALLED_COUNT: '1' })
      const out = join(dir, 'stall')
      const reference = await referenceExport(server)
      fake.clearRequests()

      // Shard 0's pages of two conversations, at 2/5 and 4/5 of the shard, are held back: a kill at each.
      const victim = 0
      const mine = fake.listConversations(COMPANY).filter((conversation) => shardOf(conversation.id, SHARDS) === victim)
      const heldPaths = [0.4, 0.8].map((at) => `/rest/v1/conversations/${mine[Math.floor(mine.length * at)]!.id}/messages`)
      for (const path of heldPaths) fake.failNext(1, { delayMs: 30_000, match: { method: 'GET', path } })

      const workers = await startWorkers(env, SHARDS + 1)
      const args = ['--out', out, '--shards', String(SHARDS), '--night', 'n1']
      const producer = start('producer.ts', args, env)
      const killed: Started[] = []
      for (const path of heldPaths) {
        await until(() => fake.requests.some((request) => request.path === path), allOutput)
        await until(
          () =>
            runnerOf(workers, victim, 'n1', killed)?.lines.some((line) => line.includes(`shard ${victim}/${SHARDS} of n1: saved`)) === true,
          allOutput,
        )
        const runner = runnerOf(workers, victim, 'n1', killed)!
        runner.child.kill('SIGKILL')
        await runner.exit
        killed.push(runner)
      }

      const failed = await producer.exit
      expect(failed.code, failed.output).toBe(1)
      const message = failed.output
      expect(message).toContain('night n1 failed: 1 of 4 shards failed for good')
      expect(message).toContain(
        `shard ${victim}/${SHARDS} (job night-n1-shard-${victim}-of-${SHARDS}) failed: job stalled more than allowable limit`,
      )
      expect(message).toContain(
        "it stalled 2 times (the worker running it died, or lost the job's lock, each time; EXPORT_MAX_STALLED_COUNT allows 1)",
      )
      expect(message).toMatch(
        new RegExp(
          `saved: [1-9]\\d* messages, the first [1-9]\\d* bytes of ${out}/n1-shard-${victim}-of-${SHARDS}\\.jsonl: a retry goes on from there`,
        ),
      )
      expect(message).toContain(`To resume: fix the cause, then run the same command again`)
      expect(message).toContain(`npm run distributed-export:night -- --out ${out} --shards ${SHARDS} --night n1`)

      // Run again: the failed shard goes on from its saved position, then the night completes.
      const saved = Number(/saved: (\d+) messages/.exec(message)?.[1])
      const output = await night(env, 'n1', out)
      expect(output).toContain(`night n1: resuming a failed night: retrying shard ${victim}/${SHARDS} from ${saved} messages saved`)
      expect(allOutput()).toContain(`shard ${victim}/${SHARDS} of n1: resuming after ${saved} messages`)
      await expectExactly(out, 'n1', reference)
      await stopWorkers(workers)
    },
  )

  it(
    'Redis restarted without persistence mid-night: the producer stops waiting on its own, says what was lost and how to resume; run again, the night is exact',
    { timeout: 120_000 },
    async () => {
      const volatile = await startRedis()
      cleanup.push(() => volatile.stop())
      const seed = generateDataset({ seed: 31, conversations: 120, messages: 6_000 })
      const fake = createFakeChatService({ seed, latencyMs: 10 })
      const server = await serve(fake)
      const env = environment(server, 'restart', FAST, volatile.url)
      const out = join(dir, 'restart')
      const reference = await referenceExport(server)

      const workers = await startWorkers(env)
      // Night 1 completes: its checkpoints are in Redis.
      const first = await night(env, 'n1', out)
      expect(first).toContain('keeps no copy of its data on disk (no AOF, no RDB)') // warned before the night
      // Night 2 (everything is new: 2 messages in each conversation) is cut by a restart, one page held back.
      for (const conversation of fake.listConversations(COMPANY)) fake.appendMessages(COMPANY, conversation.id, 2)
      const everything = await referenceExport(server)
      fake.clearRequests()
      const heldPath = `/rest/v1/conversations/${fake.listConversations(COMPANY)[60]!.id}/messages`
      fake.failNext(1, { delayMs: 30_000, match: { method: 'GET', path: heldPath } })
      const args = ['--out', out, '--shards', String(SHARDS), '--night', 'n2']
      const producer = start('producer.ts', args, env)
      await until(() => fake.requests.some((request) => request.path === heldPath) && allOutput().includes('of n2: saved'), allOutput)
      await volatile.restart()

      // Without the fix it waited forever, printing nothing (this test's timeout).
      const lost = await producer.exit
      expect(lost.code, lost.output).toBe(1)
      expect(lost.output).toContain(
        `night n2 cannot finish: its jobs are gone from Redis (${volatile.url}): it restarted and came back without them`,
      )
      expect(lost.output).toContain(
        'and the checkpoints of the last finished night: the night runs again from nothing, every message written again',
      )
      expect(lost.output).toContain(`npm run distributed-export:night -- --out ${out} --shards ${SHARDS} --night n2`)
      // The workers said why they stopped, and live on for the next run.
      expect(allOutput()).toMatch(/is gone from Redis|is no longer this worker's/)

      // Run again: the night starts over, from nothing (its checkpoints are gone): every message, each once.
      const again = await night(env, 'n2', out)
      expect(again).toContain('night n2: a first night, every message')
      await expectExactly(out, 'n2', everything)
      expect(everything.length).toBe(reference.length + 2 * 120)
      await stopWorkers(workers)
    },
  )

  it(
    'Redis with AOF: down longer than EXPORT_REDIS_DOWN_MS, the producer stops waiting and says so; back, the night goes on, and waited for again it completes exactly',
    { timeout: 120_000 },
    async () => {
      const aofDir = await mkdtemp(join(tmpdir(), 'distributed-export-aof-'))
      const durable = await startRedis({ appendOnlyDir: aofDir })
      cleanup.push(async () => {
        await durable.stop()
        await rm(aofDir, { recursive: true, force: true })
      })
      const seed = generateDataset({ seed: 37, conversations: 120, messages: 6_000 })
      const fake = createFakeChatService({ seed, latencyMs: 10 })
      const server = await serve(fake)
      const env = environment(server, 'aof', FAST, durable.url)
      const out = join(dir, 'aof')
      const reference = await referenceExport(server)
      fake.clearRequests()
      const heldPath = `/rest/v1/conversations/${fake.listConversations(COMPANY)[60]!.id}/messages`
      fake.failNext(1, { delayMs: 4_000, match: { method: 'GET', path: heldPath } })

      const workers = await startWorkers(env)
      const args = ['--out', out, '--shards', String(SHARDS), '--night', 'n1']
      const producer = start('producer.ts', args, env)
      await until(() => fake.requests.some((request) => request.path === heldPath) && allOutput().includes('of n1: saved'), allOutput)
      await durable.stop()

      const gaveUp = await producer.exit
      expect(gaveUp.code, gaveUp.output).toBe(1)
      expect(gaveUp.output).toContain(`night n1: Redis (${durable.url}) has not answered for 2000 ms`)
      expect(gaveUp.output).toContain('Run the same command again to wait for the night')
      expect(gaveUp.output).not.toContain('keeps no copy of its data on disk') // AOF: no warning

      // Back with its AOF: the workers go on by themselves; the producer, run again, waits for the night.
      await durable.restart()
      await night(env, 'n1', out)
      await expectExactly(out, 'n1', reference)
      await stopWorkers(workers)
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
      for (const store of ['off', 'on']) {
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
      expect(sentInPause['on']).toBe(0) // all four waited
    },
  )
})
