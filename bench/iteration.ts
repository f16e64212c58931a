// Full-iteration benchmark: every message of one conversation at limit 100, against a fake that
// adds a fixed latency to every response: sequential (prefetch 0) against prefetch 1, 2, 4, 8.
import { ChatServiceClient } from 'chat-service-sdk'
import type { ServerInfo } from './fake.ts'
import { collectGarbage, Deadline, rotate, spread, type Spread } from './lib.ts'

export interface IterationConfig {
  rounds: number
  messages: number
  limit: number
  prefetch: readonly number[]
  /** Wall-clock cap of one full iteration; exceeding it aborts the benchmark. */
  runBudgetMs: number
}

export interface IterationFigures {
  label: string
  prefetch: number
  wallMs: Spread
  pagesPerSec: Spread
  /** Per-round speed-up over sequential with the same client configuration (paired: same round). */
  speedup: Spread
}

/** Iterates every message once with `prefetch`; checks count and order; resolves with the wall time in ms. */
export async function iterateAll(
  client: ChatServiceClient,
  server: ServerInfo,
  config: IterationConfig,
  prefetch: number,
): Promise<number> {
  const deadline = new Deadline(config.runBudgetMs, `iterating ${config.messages} messages with prefetch ${prefetch}`)
  let count = 0
  let lastId = ''
  const started = performance.now()
  for await (const message of client.conversations.messages.list(server.conversationId, { limit: config.limit }, { prefetch })) {
    if (message.id <= lastId) throw new Error(`messages out of order: ${message.id} after ${lastId}`)
    lastId = message.id
    if ((++count & 1023) === 0) deadline.check()
  }
  const wall = performance.now() - started
  if (count !== config.messages) throw new Error(`expected ${config.messages} messages, iterated ${count}`)
  return wall
}

export async function iteration(server: ServerInfo, config: IterationConfig, log: (line: string) => void): Promise<IterationFigures[]> {
  const client = new ChatServiceClient({ baseUrl: server.url, keyId: server.keyId, keySecret: server.keySecret, logLevel: 'warn' })
  const pages = Math.ceil(config.messages / config.limit)
  const settings = config.prefetch.map((p) => ({ label: String(p), prefetch: p }))
  try {
    // Warm-up: a few pages per setting (JIT, sockets), untimed.
    for (const s of settings) {
      let n = 0
      for await (const page of client.conversations.messages
        .list(server.conversationId, { limit: config.limit }, { prefetch: s.prefetch })
        .pages()) {
        if (++n >= Math.max(s.prefetch, 1) * 3 || page.data.length === 0) break
      }
    }
    const walls = new Map<string, number[]>(settings.map((s) => [s.label, []]))
    for (let round = 0; round < config.rounds; round++) {
      const started = performance.now()
      for (const s of rotate(settings, round)) {
        collectGarbage()
        walls.get(s.label)!.push(await iterateAll(client, server, config, s.prefetch))
      }
      log(`  iteration round ${round + 1}/${config.rounds}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
    }
    return settings.map((s) => {
      const w = walls.get(s.label)!
      const base = walls.get('0') ?? w
      return {
        label: s.label,
        prefetch: s.prefetch,
        wallMs: spread(w),
        pagesPerSec: spread(w.map((ms) => (pages / ms) * 1000)),
        speedup: spread(w.map((ms, i) => base[i]! / ms)),
      }
    })
  } finally {
    await client.close()
  }
}
