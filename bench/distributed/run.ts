// The distributed export of issue 17 (examples/distributed-export/) against the single-process
// nightly export, on the export benchmark's server and company (bench/export/: 2,000
// conversations, 200,000 messages, 5 ms per request, in its own process), and a real Redis
// (scripts/redis.ts). Side by side, rotated each round, a first night (every message) each run:
//   - single: `chat-service export --checkpoint` (the package's command, built), 1 process, 16 in flight;
//   - BullMQ: 4 worker processes of the example, 4 in flight each (16 in all), one flow of 4 shard jobs,
//     timed from the producer's start to its exit (the workers are started, and warm, before).
// Both write JSON Lines with fsync and atomic saves about once a second. Then the rate-limit
// section (issue 27): the fake with each kind of limiter at 100 requests/s, the example's 4 workers
// sharing the learned rate through the Redis store (with take), sharing only the pause (0.3's
// store), and without pacing, while the company's login path (a client of its own on the same key
// pair and store) issues a token every 200 ms: useful throughput over the limit, the 429s, the
// login calls' time. Prints figures; never fails on one.
//   npm run bench:distributed                   (~3 min)
//   npm run bench:distributed -- --rounds 5 --only export|rate
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import { ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type RateLimitOptions } from 'chat-service-sdk/testing'
import { startRedis, type RunningRedis } from '../../scripts/redis.ts'
import { spawnExportServer } from '../export/control.ts'
import { fmtRatio, fmtSpread, machineInfo, percentile, ratioStat, rotate, spread, table } from '../lib.ts'
import { pauseOnly, redisRateLimitStore } from '../../examples/distributed-export/rate-limit-store.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    only: { type: 'string', default: 'export,rate' },
    // The rate section: only the contenders whose name contains this, and a per-second timeline of each run.
    contender: { type: 'string', default: '' },
    limiter: { type: 'string', default: '' },
    /** The rate section's company, times this (a longer run: the start, before the limit is found, weighs less). */
    scale: { type: 'string', default: '1' },
    timeline: { type: 'boolean', default: false },
    /** With --timeline: the workers' pacing log lines too. */
    'pacing-log': { type: 'boolean', default: false },
    /**
     * The rate section, `--night 2`: each round runs the export twice, the second time as the next
     * night does: new worker processes, and the store holding the rate the first night learned,
     * aged by a day (copied to the second night's key, the pause and bucket left behind). Both
     * nights' figures are printed; the table holds the second's.
     */
    night: { type: 'string', default: '1' },
  },
})
const ROUNDS = Number(values.rounds)
const NIGHTS = Number(values.night)
if (NIGHTS !== 1 && NIGHTS !== 2) throw new Error('--night is 1 or 2')
const sections = new Set(values.only.split(','))
const EXAMPLE = fileURLToPath(new URL('../../examples/distributed-export/', import.meta.url))
const CLI = fileURLToPath(new URL('../../dist/cli/index.cjs', import.meta.url))
const DATASET = { conversations: 2_000, messages: 200_000 }
const WORKERS = 4
const PER_WORKER = 4
/** The 429 section: the fake's limit, and a company small enough to finish under it. */
const SCALE = Number(values.scale)
const RATE = { requestsPerSecond: 100, burst: 20, conversations: 2_000 * SCALE, messages: 40_000 * SCALE, latencyMs: 10 }

/**
 * Accepted requests per second from the workers' first request to their last (logins included):
 * the export itself, as bench:pacing measures one process, without the producer's start-up and
 * BullMQ's hand-over at the end.
 */
function exportSpanUseful(
  requests: readonly { readonly time: number; readonly path: string; readonly status?: number | undefined }[],
): number {
  const exporting = requests.filter((request) => !request.path.endsWith('/auth/token'))
  const first = Math.min(...exporting.map((request) => request.time))
  const last = Math.max(...exporting.map((request) => request.time))
  const accepted = requests.filter((request) => request.time >= first && request.time <= last && request.status !== 429).length
  return accepted / ((last - first) / 1000)
}

/** Requests per second of a run (accepted / 429), from the moment the producer started. */
function timeline(requests: readonly { readonly time: number; readonly status?: number | undefined }[], startedPerf: number): string {
  const start = Date.now() - (performance.now() - startedPerf)
  const seconds: ({ ok: number; refused: number } | undefined)[] = []
  for (const request of requests) {
    const second = Math.floor((request.time - start) / 1000)
    if (second < 0) continue
    const slot = (seconds[second] ??= { ok: 0, refused: 0 })
    if (request.status === 429) slot.refused++
    else slot.ok++
  }
  return Array.from(seconds, (slot, second) => `    ${second}s ${slot?.ok ?? 0}/${slot?.refused ?? 0}`).join('\n')
}

const log = (line: string): void => void process.stderr.write(`${line}\n`)
const out = (line = ''): void => void process.stdout.write(`${line}\n`)

interface Proc {
  readonly child: ChildProcess
  readonly lines: string[]
  readonly exit: Promise<number | null>
}

function run(command: string, args: readonly string[], env: Record<string, string>): Proc {
  const child = spawn(command, args, {
    env: { ...process.env, CHAT_SERVICE_LOG: values['pacing-log'] ? 'info' : 'error', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(line))
  createInterface({ input: child.stderr }).on('line', (line) => lines.push(line))
  return { child, lines, exit: once(child, 'exit').then(([code]) => code as number | null) }
}

async function mustExit(proc: Proc, what: string): Promise<void> {
  const code = await proc.exit
  if (code !== 0) throw new Error(`${what} exited with ${String(code)}:\n${proc.lines.slice(-20).join('\n')}`)
}

async function startWorkers(env: Record<string, string>): Promise<Proc[]> {
  const workers = Array.from({ length: WORKERS }, () => run(process.execPath, [join(EXAMPLE, 'worker.ts')], env))
  while (!workers.every((w) => w.lines.some((line) => line.includes('ready')))) {
    if (workers.some((w) => w.child.exitCode !== null)) throw new Error(`a worker exited:\n${workers.flatMap((w) => w.lines).join('\n')}`)
    await sleep(20)
  }
  return workers
}

async function stopAll(procs: readonly Proc[]): Promise<void> {
  for (const proc of procs) proc.child.kill('SIGTERM')
  await Promise.all(procs.map((proc) => proc.exit))
}

/** Lines in the files of `dir` (checks that the export is complete). */
async function countLines(dir: string): Promise<number> {
  let lines = 0
  for (const file of await readdir(dir)) {
    if (!file.endsWith('.jsonl')) continue
    const text = await readFile(join(dir, file), 'utf8')
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++
  }
  return lines
}

async function cpuSeconds(pids: readonly number[]): Promise<number> {
  // utime + stime of each process, from /proc (Linux), in clock ticks of 100 Hz.
  let ticks = 0
  for (const pid of pids) {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')
    ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticks / 100
}

const redis: RunningRedis = await startRedis()
const work = await mkdtemp(join(tmpdir(), 'bench-distributed-'))
const info = machineInfo()
out(`# Distributed export (issue 17): Node ${info.node}, ${info.parallelism} cores (${info.cpu}), Redis on loopback, ${ROUNDS} rounds`)
try {
  if (sections.has('export')) {
    log(`starting the export server (${DATASET.conversations} conversations, ${DATASET.messages} messages, 5 ms a request)...`)
    const server = await spawnExportServer({ ...DATASET, latencyMs: 5, linkMbps: 50, linkRttMs: 20 })
    const env = {
      CHAT_SERVICE_BASE_URL: server.url,
      CHAT_SERVICE_KEY_ID: server.keyId,
      CHAT_SERVICE_KEY_SECRET: server.keySecret,
      REDIS_URL: redis.url,
      EXPORT_PREFIX: 'bench',
      EXPORT_CONCURRENCY: String(PER_WORKER),
    }
    const workers = await startWorkers(env)
    const cleaner = new Redis(redis.url)
    type Contender = (dir: string, round: number) => Promise<{ wallMs: number; cpuS: number | undefined }>
    const contenders: Record<string, Contender> = {
      'single process @16 (chat-service export --checkpoint)': async (dir: string) => {
        const proc = run(
          process.execPath,
          [CLI, 'export', '--out', join(dir, 'all.jsonl'), '--checkpoint', join(dir, 'all.checkpoint.json'), '--concurrency', '16'],
          env,
        )
        const started = performance.now()
        await mustExit(proc, 'chat-service export')
        return { wallMs: performance.now() - started, cpuS: undefined }
      },
      [`BullMQ, ${WORKERS} workers @${PER_WORKER}`]: async (dir: string, round: number) => {
        await cleaner.del('bench:checkpoints') // a first night every time: every message
        const before = await cpuSeconds(workers.map((w) => w.child.pid!))
        const proc = run(
          process.execPath,
          [join(EXAMPLE, 'producer.ts'), '--out', dir, '--shards', String(WORKERS), '--night', `r${round}`],
          env,
        )
        const started = performance.now()
        await mustExit(proc, 'producer')
        const wallMs = performance.now() - started
        return { wallMs, cpuS: (await cpuSeconds(workers.map((w) => w.child.pid!))) - before }
      },
    }
    const names = Object.keys(contenders)
    const walls = new Map<string, number[]>(names.map((name) => [name, []]))
    const cpus = new Map<string, number[]>(names.map((name) => [name, []]))
    const ratios: number[] = []
    for (let round = -1; round < ROUNDS; round++) {
      const thisRound = new Map<string, number>()
      for (const name of rotate(names, Math.max(round, 0))) {
        const dir = join(work, `${round + 1}-${names.indexOf(name)}`)
        await rm(dir, { recursive: true, force: true })
        await mkdir(dir, { recursive: true })
        const result = await contenders[name]!(dir, round + 1)
        const lines = await countLines(dir)
        if (lines !== DATASET.messages) throw new Error(`${name}: ${lines} lines, expected ${DATASET.messages}`)
        await rm(dir, { recursive: true, force: true })
        if (round < 0) continue // warm-up: page cache, JIT, connections
        thisRound.set(name, result.wallMs)
        walls.get(name)!.push(result.wallMs)
        if (result.cpuS !== undefined) cpus.get(name)!.push(result.cpuS)
      }
      if (round < 0) continue
      // Throughput of BullMQ over the single process's, this round: single wall / BullMQ wall.
      ratios.push(thisRound.get(names[0]!)! / thisRound.get(names[1]!)!)
      log(`  export round ${round + 1}/${ROUNDS}: ${names.map((name) => `${(thisRound.get(name)! / 1000).toFixed(2)} s`).join(' vs ')}`)
    }
    await cleaner.quit()
    await stopAll(workers)
    await server.stop()
    out()
    out(
      `## First night, ${DATASET.messages.toLocaleString('en')} messages (${DATASET.conversations} conversations), 5 ms a request, JSON Lines with fsync`,
    )
    out()
    out(
      table(
        ['contender', 'wall s', 'messages/s', 'workers CPU s'],
        names.map((name) => {
          const wall = spread(walls.get(name)!)
          const rate = spread(walls.get(name)!.map((ms) => DATASET.messages / (ms / 1000)))
          const cpu = cpus.get(name)!
          return [
            name,
            fmtSpread({ ...wall, median: wall.median / 1000, min: wall.min / 1000, max: wall.max / 1000 }, 2),
            fmtSpread(rate, 0),
            cpu.length > 0 ? fmtSpread(spread(cpu), 2) : '',
          ]
        }),
      ),
    )
    out()
    const ratio = spread(ratios)
    const stat = ratioStat(ratios)
    out(
      `BullMQ throughput / single process throughput, per round: median ${fmtSpread(ratio, 2, '×')}; geometric mean ${fmtRatio(stat, 2)} (goal ≥ 0.9×: ${stat.mean >= 0.9 ? 'met' : 'MISSED'}${stat.mean >= 0.9 === stat.lo >= 0.9 ? '' : ', the interval straddles the goal'})`,
    )
  }

  if (sections.has('rate')) {
    out()
    out(
      `## Spending one rate limit from ${WORKERS} workers${NIGHTS === 2 ? ' (the second night: the store holds what the first learned)' : ''} (@${PER_WORKER} each; ${RATE.conversations} conversations, ${RATE.messages} messages, ${RATE.latencyMs} ms a request, limit ${RATE.requestsPerSecond} requests/s per key pair), a login call every 200 ms on the company's key pair`,
    )
    out()
    const seed = generateDataset({ seed: 29, conversations: RATE.conversations, messages: RATE.messages })
    const limiters = {
      'token bucket, Retry-After': { requestsPerSecond: RATE.requestsPerSecond, burst: RATE.burst },
      'token bucket, no Retry-After': { requestsPerSecond: RATE.requestsPerSecond, burst: RATE.burst, retryAfter: 'none' },
      'fixed window (1 s), Retry-After': { algorithm: 'fixed-window', requestsPerSecond: RATE.requestsPerSecond, windowMs: 1_000 },
    } as const satisfies Record<string, RateLimitOptions>
    /** What the workers (and the login client) share, and how they pace: the example's EXPORT_RATE_LIMIT_STORE and EXPORT_PACING. */
    const contenders = {
      'shared rate (store with take), pacing': { store: 'on', pacing: 'adaptive' },
      'shared pause only (0.3 store), pacing': { store: 'pause', pacing: 'adaptive' },
      'shared pause only, no pacing (0.3)': { store: 'pause', pacing: 'off' },
    } as const
    const rows: string[][] = []
    for (const [limiterName, rateLimit] of Object.entries(limiters)) {
      if (!limiterName.includes(values.limiter)) continue
      for (const [name, contender] of Object.entries(contenders)) {
        if (!name.includes(values.contender)) continue
        const figures: { useful: number[]; span: number[]; refused: number[]; p50: number[]; p95: number[]; wall: number[] } = {
          useful: [],
          span: [],
          refused: [],
          p50: [],
          p95: [],
          wall: [],
        }
        for (let round = 0; round < ROUNDS; round++) {
          const fake = createFakeChatService({ seed, latencyMs: RATE.latencyMs, rateLimit })
          const server = await fake.listen()
          const { baseUrl, keyId, keySecret } = server.clientOptions()
          const firstPrefix = `rate-${round}-${Object.keys(limiters).indexOf(limiterName)}-${Object.keys(contenders).indexOf(name)}`
          for (let night = 1; night <= NIGHTS; night++) {
            const prefix = night === 1 ? firstPrefix : `${firstPrefix}-night-${night}`
            if (night > 1) {
              // The store as the next night finds it: the learned rate a day older, nothing else.
              const pacingKey = (of: string): string => `${of}:rate-limited-until:${keyId}:pacing`
              const admin = new Redis(redis.url)
              const [max, learnedAt, recoveryMs] = await admin.hmget(pacingKey(firstPrefix), 'max', 'learnedAt', 'recoveryMs')
              if (max != null && learnedAt != null && recoveryMs != null)
                await admin.hset(pacingKey(prefix), { max, learnedAt: Number(learnedAt) - 86_400_000, recoveryMs })
              admin.disconnect()
              await sleep(1_100) // the limiter's bucket full again, as after a day
            }
            const before = fake.requests.length
            const env = {
              CHAT_SERVICE_BASE_URL: baseUrl,
              CHAT_SERVICE_KEY_ID: keyId,
              CHAT_SERVICE_KEY_SECRET: keySecret,
              REDIS_URL: redis.url,
              EXPORT_PREFIX: prefix,
              EXPORT_CONCURRENCY: String(PER_WORKER),
              EXPORT_RATE_LIMIT_STORE: contender.store,
              EXPORT_PACING: contender.pacing,
            }
            const workers = await startWorkers(env)
            await sleep(1_100) // the bucket full again after the workers' start
            // The company's login path: its own client on the same key pair and the same store.
            const loginRedis = new Redis(redis.url)
            const store = redisRateLimitStore(loginRedis, `${prefix}:rate-limited-until:${keyId}`) // the workers' key (config.ts, rateLimitKey)
            const login = new ChatServiceClient({
              baseUrl,
              keyId,
              keySecret,
              logLevel: 'off',
              pacing: contender.pacing,
              rateLimitStore: contender.store === 'on' ? store : pauseOnly(store),
            })
            const loginTimes: number[] = []
            let exporting = true
            const logins = (async () => {
              while (exporting) {
                const began = performance.now()
                try {
                  await login.auth.issueToken({ userId: 'u-login' })
                  loginTimes.push(performance.now() - began)
                } catch {
                  loginTimes.push(Number.POSITIVE_INFINITY)
                }
                const spent = performance.now() - began
                if (spent < 200) await sleep(200 - spent)
              }
            })()
            const dir = join(work, prefix)
            const started = performance.now()
            const producer = run(
              process.execPath,
              [join(EXAMPLE, 'producer.ts'), '--out', dir, '--shards', String(WORKERS), '--night', 'n1'],
              env,
            )
            if (values.timeline) {
              const seen = new Set<string>()
              const stamp = setInterval(() => {
                for (const line of [...producer.lines, ...workers.flatMap((w) => w.lines)])
                  if (!seen.has(line)) {
                    seen.add(line)
                    log(`    ${((performance.now() - started) / 1000).toFixed(2)}s ${line}`)
                  }
              }, 20)
              void producer.exit.finally(() => {
                clearInterval(stamp)
              })
            }
            await mustExit(producer, 'producer')
            const wallMs = performance.now() - started
            exporting = false
            await logins
            await login.close()
            loginRedis.disconnect()
            const lines = await countLines(dir)
            if (lines !== RATE.messages) throw new Error(`${name}: ${lines} lines, expected ${RATE.messages}`)
            await stopAll(workers)
            const requests = fake.requests.slice(before)
            const refused = requests.filter((request) => request.status === 429).length
            if (values.timeline) log(timeline(requests, started))
            if (values['pacing-log'])
              for (const [index, worker] of workers.entries())
                for (const line of worker.lines) if (line.includes('pacing')) log(`    worker ${index}: ${line}`)
            const statuses = { ok: requests.length - refused, refused }
            const sorted = loginTimes.toSorted((x, y) => x - y)
            const useful = statuses.ok / (wallMs / 1000) / RATE.requestsPerSecond
            const span = exportSpanUseful(requests) / RATE.requestsPerSecond
            const refusedShare = (100 * statuses.refused) / (statuses.ok + statuses.refused)
            const p95 = percentile(sorted, 95)
            if (night === NIGHTS) {
              figures.useful.push(useful)
              figures.span.push(span)
              figures.refused.push(refusedShare)
              figures.p50.push(percentile(sorted, 50))
              figures.p95.push(p95)
              figures.wall.push(wallMs / 1000)
            }
            log(
              `  ${limiterName}, ${name}, round ${round + 1}/${ROUNDS}${NIGHTS > 1 ? `, night ${night}` : ''}: useful ${useful.toFixed(3)} of the limit (${span.toFixed(3)} over the export), ${refusedShare.toFixed(1)} % 429s, login p95 ${p95.toFixed(0)} ms, ${(wallMs / 1000).toFixed(1)} s`,
            )
          }
          await server.close()
        }
        rows.push([
          limiterName,
          name,
          fmtSpread(spread(figures.useful), 3),
          fmtSpread(spread(figures.span), 3),
          fmtSpread(spread(figures.refused), 1, ' %'),
          `${fmtSpread(spread(figures.p50), 0)} / ${fmtSpread(spread(figures.p95), 0)}`,
          fmtSpread(spread(figures.wall), 1),
        ])
      }
    }
    out(table(['limiter', 'workers', 'useful / limit', 'over the export', '429s', 'login p50 / p95 ms', 'wall s'], rows))
    out()
    out('Every night wrote every message exactly once (checked: the files hold every message of the company).')
  }
} finally {
  await redis.stop()
  await rm(work, { recursive: true, force: true })
}
