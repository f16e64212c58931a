// What the tests of examples/distributed-export/ share (one test a file, so that vitest runs them
// side by side: each spends most of its time waiting on child processes, held requests and
// BullMQ's lock and stall intervals, not on the CPU). They run the example as its README runs it: a
// real Redis (scripts/redis.ts: Debian's redis-server, installed when missing and root), the fake
// service listening, worker processes and a producer, all child processes running the example from
// source. `useDistributedExport()` gives a file its own Redis, directory and children, and stops
// them after the file.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect } from 'vitest'
import { ChatServiceClient, shardOf } from 'chat-service-sdk'
import type { FakeChatService, FakeServerHandle } from 'chat-service-sdk/testing'
import { startRedis, type RunningRedis } from '../../../scripts/redis.ts'
import { sdkBundleEnv } from '../../helpers/sdk-bundle.ts'

const EXAMPLE = fileURLToPath(new URL('../../../examples/distributed-export/', import.meta.url))
const FROM_SOURCE = fileURLToPath(new URL('../../helpers/sdk-from-source.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
export const SHARDS = 4
export const COMPANY = 'comp_1'
export { shardOf }

/** A child process of the example, its output kept line by line. */
export interface Started {
  readonly child: ChildProcess
  readonly lines: string[]
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>
}

/** Settings that make stalls, watches and give-ups take seconds, not minutes (README.md, "Settings"). */
export const FAST = {
  EXPORT_SAVE_EVERY_MS: '20',
  EXPORT_LOCK_MS: '3000',
  EXPORT_STALLED_INTERVAL_MS: '1000',
  EXPORT_WATCH_EVERY_MS: '200',
  EXPORT_REDIS_DOWN_MS: '2000',
}

/** Resolves once `check` holds (every 10 ms); rejects after `ms`, showing `output()`. */
export async function until(check: () => boolean | Promise<boolean>, output: () => string, ms = 30_000): Promise<void> {
  const deadline = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`condition not met in ${ms} ms; output so far:\n${output()}`)
    await sleep(10)
  }
}

/** The single-process export the shards of a first night must add up to: every message, as JSON. */
export async function referenceExport(server: FakeServerHandle): Promise<string[]> {
  const client = new ChatServiceClient(server.clientOptions())
  const reference: string[] = []
  for await (const message of client.conversations.messages.listAll({ concurrency: 8 })) reference.push(JSON.stringify(message))
  await client.close()
  return reference
}

/** The lines of every file of `out` whose name starts with `night`. */
export async function linesOf(out: string, nightName: string): Promise<string[]> {
  return (await shardFiles(out, nightName)).flatMap(({ lines }) => lines)
}

/** Each shard file of the night: its name and its lines. */
async function shardFiles(out: string, nightName: string): Promise<{ file: string; lines: string[] }[]> {
  const files = (await readdir(out)).filter((file) => file.startsWith(`${nightName}-shard-`)).sort()
  expect(files).toHaveLength(SHARDS)
  return Promise.all(files.map(async (file) => ({ file, lines: (await readFile(join(out, file), 'utf8')).split('\n').slice(0, -1) })))
}

/**
 * Each line written more than once: where each copy is (file, line, byte offset), and what the
 * workers said of that shard (starts, resumes, cut-backs, stops, errors, and the first save of each
 * worker that counted the copy), so that a failing run names who wrote each copy.
 */
function describeRepeats(files: readonly { file: string; lines: string[] }[], nightName: string, output: string): string {
  const said = output.split('\n')
  const parts: string[] = []
  for (const { file, lines } of files) {
    const shard = /-shard-(\d+)-of-/.exec(file)?.[1] ?? '?'
    const about = said.filter((line) => line.includes(`shard ${shard}/${SHARDS} of ${nightName}:`))
    const seen = new Map<string, number[]>()
    let offset = 0
    const offsets: number[] = []
    lines.forEach((line, index) => {
      offsets.push(offset)
      offset += Buffer.byteLength(line) + 1
      seen.set(line, [...(seen.get(line) ?? []), index])
    })
    for (const [line, at] of seen) {
      if (at.length < 2) continue
      const id = (JSON.parse(line) as { id?: string }).id ?? line.slice(0, 80)
      parts.push(`${id} is ${at.length} times in ${file}: ${at.map((index) => `line ${index + 1} (bytes ${offsets[index]}..)`).join(', ')}`)
      for (const index of at) {
        const end = offsets[index]! + Buffer.byteLength(line) + 1
        // The first save of each worker whose length covers this copy: the attempt that counted it.
        const savers = new Map<string, string>()
        for (const text of about) {
          const bytes = /saved: \d+ messages, (\d+) bytes/.exec(text)?.[1]
          const worker = /^worker (\d+)/.exec(text)?.[1] ?? '?'
          if (bytes !== undefined && Number(bytes) >= end && !savers.has(worker)) savers.set(worker, text)
        }
        parts.push(`  the copy at line ${index + 1} is counted by: ${[...savers.values()].join(' | ') || 'no save'}`)
      }
      parts.push(
        `  what the workers said of shard ${shard}:`,
        ...about.filter((text) => !text.includes(': saved:')).map((text) => `    ${text}`),
      )
    }
  }
  const errors = said.filter((line) => /^worker \d+: (error|connected|SIGTERM)/.test(line))
  return [...parts, "the workers' Redis errors and signals:", ...errors.map((text) => `    ${text}`)].join('\n')
}

/** Asserts that the night's files hold exactly `reference`, each message once; `output` (the children's) explains a repeat. */
export async function expectExactly(
  out: string,
  nightName: string,
  reference: readonly string[],
  output: () => string = () => '',
): Promise<void> {
  const files = await shardFiles(out, nightName)
  const lines = files.flatMap((file) => file.lines)
  if (new Set(lines).size !== lines.length) expect.fail(`messages written more than once:\n${describeRepeats(files, nightName, output())}`)
  expect(lines.length).toBe(reference.length)
  expect(new Set(lines)).toEqual(new Set(reference)) // none lost
}

/** The worker of `workers`, alive and not in `skip`, whose log says it started or resumed `shard` of `nightName`. */
export function runnerOf(
  workers: readonly Started[],
  shard: number,
  nightName: string,
  skip: readonly Started[] = [],
): Started | undefined {
  return workers.find(
    (started) =>
      !skip.includes(started) &&
      started.child.exitCode === null &&
      started.child.signalCode === null &&
      started.lines.some((line) => new RegExp(`shard ${shard}/${SHARDS} of ${nightName}: (started|resuming)`).test(line)),
  )
}

/**
 * Stops `workers` as an operator would (SIGTERM), so that a test leaves none running for the next.
 * A worker still running 30 s later fails the test naming it, with what every worker said (rather
 * than the test's timeout, which shows nothing of them).
 */
export async function stopWorkers(workers: readonly Started[]): Promise<void> {
  const running = (worker: Started): boolean => worker.child.exitCode === null && worker.child.signalCode === null
  for (const worker of workers) if (running(worker)) worker.child.kill('SIGTERM')
  await until(
    () => !workers.some(running),
    () =>
      `worker ${workers
        .filter(running)
        .map((worker) => worker.child.pid)
        .join(', ')} still running after SIGTERM; what the workers said:\n` + workers.map((worker) => worker.lines.join('\n')).join('\n'),
  )
}

/** A test file's Redis, directory and child processes (`useDistributedExport()`). */
export interface DistributedExport {
  /** This file's Redis (started before its tests, stopped after). */
  readonly redis: RunningRedis
  /** A temporary directory of this file's (removed after). */
  readonly dir: string
  /** Every child process this file started. */
  readonly children: readonly Started[]
  /** Runs `after` once the file's tests are done (before the children are waited for and Redis stops). */
  readonly cleanup: (after: () => Promise<void>) => void
  /** Starts `node <the example's file> args...` from source, with `env` over this process's. */
  readonly start: (file: string, args: readonly string[], env: Record<string, string>) => Started
  /** Every line every child printed so far. */
  readonly allOutput: () => string
  /** The environment of the example's processes: this Redis (or `redisUrl`), this fake, these settings. */
  readonly environment: (
    server: FakeServerHandle,
    prefix: string,
    extra?: Record<string, string>,
    redisUrl?: string,
  ) => Record<string, string>
  /** `count` workers, once each says it is ready. */
  readonly startWorkers: (env: Record<string, string>, count?: number) => Promise<Started[]>
  /** Runs the producer for the night `name` to its end; asserts it succeeded; its output. */
  readonly night: (env: Record<string, string>, name: string, out: string) => Promise<string>
  /** `fake` listening, closed after the file. */
  readonly serve: (fake: FakeChatService) => Promise<FakeServerHandle>
}

/** Registers the file's set-up and tear-down; the value is usable inside its tests. */
export function useDistributedExport(): DistributedExport {
  const children: Started[] = []
  const cleanup: (() => Promise<void>)[] = []
  let redis: RunningRedis | undefined
  let dir: string | undefined
  let bundle: Awaited<ReturnType<typeof sdkBundleEnv>> | undefined

  beforeAll(async () => {
    redis = await startRedis() // installs redis-server first if it is missing (as root), else says how
    dir = await mkdtemp(join(tmpdir(), 'distributed-export-'))
    bundle = await sdkBundleEnv()
  }, 300_000)

  afterAll(async () => {
    for (const started of children) if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL')
    await Promise.all(children.map((started) => started.exit))
    for (const step of cleanup.reverse()) await step()
    await redis?.stop()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  const allOutput = (): string => children.map((started) => started.lines.join('\n')).join('\n')

  function start(file: string, args: readonly string[], env: Record<string, string>): Started {
    const child = spawn(process.execPath, ['--no-warnings', '--import', FROM_SOURCE, join(EXAMPLE, file), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...bundle, CHAT_SERVICE_LOG: 'error', ...env },
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

  const kit: DistributedExport = {
    get redis() {
      if (redis === undefined) throw new Error('Redis is not started yet: use it inside a test')
      return redis
    },
    get dir() {
      if (dir === undefined) throw new Error('the directory is not made yet: use it inside a test')
      return dir
    },
    children,
    cleanup: (after) => {
      cleanup.push(after)
    },
    start,
    allOutput,
    environment: (server, prefix, extra = {}, redisUrl = kit.redis.url) => {
      const { baseUrl, keyId, keySecret } = server.clientOptions()
      return {
        REDIS_URL: redisUrl,
        EXPORT_PREFIX: prefix,
        CHAT_SERVICE_BASE_URL: baseUrl,
        CHAT_SERVICE_KEY_ID: keyId,
        CHAT_SERVICE_KEY_SECRET: keySecret,
        ...extra,
      }
    },
    startWorkers: async (env, count = SHARDS) => {
      const workers = Array.from({ length: count }, () => start('worker.ts', [], env))
      await until(() => workers.every((worker) => worker.lines.some((line) => line.includes('ready'))), allOutput, 60_000)
      return workers
    },
    night: async (env, name, out) => {
      const producer = start('producer.ts', ['--out', out, '--shards', String(SHARDS), '--night', name], env)
      const exit = await producer.exit
      expect(exit, exit.output).toMatchObject({ code: 0, signal: null })
      return exit.output
    },
    serve: async (fake) => {
      const server = await fake.listen()
      cleanup.push(() => server.close())
      return server
    },
  }
  return kit
}
