// Child process of the memory benchmark (started by bench/memory.ts, never by hand): iterates every
// message of one conversation with the SDK, keeping none, and prints one JSON line with its memory
// figures. Peak RSS is the kernel's (process.resourceUsage().maxRSS), so nothing between samples is
// missed; RSS and heap are also sampled every 10,000 messages.
// BENCH_MODE=baseline only starts the client (Node + SDK loaded, nothing sent); BENCH_MODE=raw reads
// the same pages on the raw-undici floor (bench/floor.ts): the floor to compare with.
//   env BENCH_SERVER='{"url","keyId","keySecret","conversationId"}' BENCH_MESSAGES=N BENCH_PREFETCH=K BENCH_BUDGET_MS=MS
// The built package (self-reference: Node resolves it to dist/), as users run it; importing
// src/*.ts would add Node's type-stripping machinery to the figures.
import { ChatServiceClient } from 'chat-service-sdk'
import type { ServerInfo } from './fake.ts'
import { credentialsBody, floorAgent, floorGet } from './floor.ts'
import { Deadline } from './lib.ts'

const server = JSON.parse(process.env['BENCH_SERVER'] ?? '') as ServerInfo
const expected = Number(process.env['BENCH_MESSAGES'])
const prefetch = Number(process.env['BENCH_PREFETCH'] ?? '0')
const mode = process.env['BENCH_MODE'] ?? 'iterate'
const deadline = new Deadline(Number(process.env['BENCH_BUDGET_MS'] ?? '300000'), `memory: iterating ${expected} messages`)

const client = new ChatServiceClient({ baseUrl: server.url, keyId: server.keyId, keySecret: server.keySecret, logLevel: 'warn' })
const rssAtStart = process.memoryUsage.rss()
let sampledPeakRss = rssAtStart
let peakHeapUsed = process.memoryUsage().heapUsed
/** process.memoryUsage() at the sample with the highest RSS. */
let atPeak = process.memoryUsage()
/** RSS after the first 100,000 messages: close to the peak means memory levels off early (bounded). */
let rssAt100k = 0
/** RSS after every 100,000 messages: the shape of the curve. */
const rssEvery100k: number[] = []
let count = 0
let pages = 0
const started = performance.now()
if (mode === 'iterate') {
  // Item by item, as users iterate; nothing is kept.
  for await (const message of client.conversations.messages.list(server.conversationId, { limit: 100 }, { prefetch })) {
    if (message.id === '') throw new Error('empty message id')
    if (++count % 10_000 === 0) {
      const usage = process.memoryUsage()
      if (usage.rss > sampledPeakRss) atPeak = usage
      sampledPeakRss = Math.max(sampledPeakRss, usage.rss)
      peakHeapUsed = Math.max(peakHeapUsed, usage.heapUsed)
      if (count === 100_000) rssAt100k = usage.rss
      if (count % 100_000 === 0) rssEvery100k.push(usage.rss)
      deadline.check()
    }
  }
  pages = Math.ceil(count / 100)
  if (count !== expected) throw new Error(`expected ${expected} messages, iterated ${count}`)
} else if (mode === 'raw') {
  // The floor (bench/floor.ts): raw undici with the SDK's pool settings, reset: false, body.json(), page after page, nothing kept.
  const agent = floorAgent()
  const body = credentialsBody(server)
  const path = `/rest/v1/conversations/${encodeURIComponent(server.conversationId)}/messages`
  for (let page = 1; ; page++) {
    const parsed = await floorGet<{ data: { id: string }[]; pagination: { total_pages: number } }>(
      agent,
      server.url,
      `${path}?page=${page}&limit=100`,
      body,
    )
    for (const message of parsed.data) {
      if (message.id === '') throw new Error('empty message id')
      if (++count % 10_000 === 0) {
        const usage = process.memoryUsage()
        if (usage.rss > sampledPeakRss) atPeak = usage
        sampledPeakRss = Math.max(sampledPeakRss, usage.rss)
        peakHeapUsed = Math.max(peakHeapUsed, usage.heapUsed)
        if (count === 100_000) rssAt100k = usage.rss
        if (count % 100_000 === 0) rssEvery100k.push(usage.rss)
        deadline.check()
      }
    }
    pages = page
    if (page >= parsed.pagination.total_pages) break
  }
  await agent.close()
  if (count !== expected) throw new Error(`expected ${expected} messages, read ${count}`)
} else if (mode !== 'baseline') {
  throw new Error(`unknown BENCH_MODE ${mode}`)
}
const wallMs = performance.now() - started
await client.close()
const final = process.memoryUsage()
// What is still reachable once everything is collected (the child runs with --expose-gc): retention, not GC laziness.
const gc = (globalThis as { gc?: () => void }).gc
gc?.()
const heapUsedAfterGc = gc === undefined ? undefined : process.memoryUsage().heapUsed
process.stdout.write(
  `${JSON.stringify({
    mode,
    prefetch,
    messages: count,
    pages,
    wallMs,
    rssAtStart,
    sampledPeakRss: Math.max(sampledPeakRss, final.rss),
    peakHeapUsed: Math.max(peakHeapUsed, final.heapUsed),
    finalRss: final.rss,
    maxRss: process.resourceUsage().maxRSS * 1024,
    heapUsedAfterGc,
    rssAt100k,
    rssEvery100k,
    atPeak,
  })}\n`,
)
