// Page prefetch (issue 5), at the wire: a loopback server that serves pages of messages, records
// how many requests are in flight, which pages were asked for, and which requests were aborted.
import { createServer, type Server } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, InternalServerError, type Message } from 'chat-service-sdk'
import { until } from '../helpers/loopback.ts'

const PAGES = 10
const LIMIT = 5

interface Wire {
  client: ChatServiceClient
  asked: number[]
  aborted: number[]
  peakInFlight: () => number
  /** Highest page asked for while the consumer was on `page` (for the buffering bound). */
  askedBefore: (page: number) => number
}

let server: Server | undefined
let client: ChatServiceClient | undefined

afterEach(async () => {
  await client?.close()
  await new Promise<void>((resolve) => {
    if (server === undefined) resolve()
    else
      server.close(() => {
        resolve()
      })
  })
  server = undefined
  client = undefined
})

/** Starts a server whose page n takes `delay(n)` ms and answers `status(n)`. */
async function wire(
  options: {
    delay?: (page: number) => number
    status?: (page: number) => number
    /** `total_pages` of the answer to the `request`-th request (1-based) for page `page`. */
    totalPages?: (page: number, request: number) => number
  } = {},
): Promise<Wire & { consumerAt: (page: number) => void }> {
  const asked: number[] = []
  const aborted: number[] = []
  let inFlight = 0
  let peak = 0
  let consumerPage = 0
  const askedWhileOn = new Map<number, number>()
  server = createServer((req, res) => {
    const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page'))
    asked.push(page)
    askedWhileOn.set(consumerPage, Math.max(askedWhileOn.get(consumerPage) ?? 0, page))
    inFlight++
    peak = Math.max(peak, inFlight)
    let done = false
    res.on('close', () => {
      inFlight--
      if (!done) aborted.push(page)
    })
    req.resume()
    const timer = setTimeout(
      () => {
        done = true
        const status = options.status?.(page) ?? 200
        const totalPages = options.totalPages?.(page, asked.length) ?? PAGES
        const data: Message[] = Array.from({ length: LIMIT }, (_, i) => ({
          id: `m${(page - 1) * LIMIT + i}`,
          content: 'hi',
          role: i % 2 === 0 ? 'user' : 'assistant',
          conversation_id: 'c1',
          created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, (page - 1) * LIMIT + i)).toISOString(),
        }))
        res.statusCode = status
        res.setHeader('content-type', 'application/json')
        res.end(
          JSON.stringify(
            status === 200
              ? {
                  data,
                  pagination: { page, limit: LIMIT, total: totalPages * LIMIT, total_pages: totalPages },
                  conversation: { id: 'c1', title: 't' },
                }
              : { error: { message: 'boom' } },
          ),
        )
      },
      options.delay?.(page) ?? 10,
    )
    res.on('close', () => {
      clearTimeout(timer)
    })
  })
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  client = new ChatServiceClient({ baseUrl: `http://127.0.0.1:${port}`, keyId: 'k', keySecret: 's', maxRetries: 0, logLevel: 'off' })
  return {
    client,
    asked,
    aborted,
    peakInFlight: () => peak,
    askedBefore: (page) => askedWhileOn.get(page) ?? 0,
    consumerAt: (page) => {
      consumerPage = page
    },
  }
}

const expectedIds = Array.from({ length: PAGES * LIMIT }, (_, i) => `m${i}`)

describe('prefetch', () => {
  it('yields every item strictly in page order, whatever order the pages arrive in', async () => {
    // Later pages answer faster than earlier ones, so they arrive out of order.
    const { client } = await wire({ delay: (page) => 5 + (PAGES - page) * 4 })
    const ids: string[] = []
    for await (const message of client.conversations.messages.list('c1', { limit: LIMIT }, { prefetch: 4 })) ids.push(message.id)
    expect(ids).toEqual(expectedIds)
  })

  it('keeps at most `prefetch` requests in flight (sequential: 1)', async () => {
    for (const prefetch of [0, 1, 3]) {
      const w = await wire({ delay: () => 15 })
      const ids: string[] = []
      for await (const message of w.client.conversations.messages.list('c1', { limit: LIMIT }, { prefetch })) ids.push(message.id)
      expect(ids).toEqual(expectedIds)
      expect(w.peakInFlight()).toBe(Math.max(1, prefetch))
      expect(w.asked).toHaveLength(PAGES) // each page once
      await client?.close()
      await new Promise<void>((resolve) =>
        server?.close(() => {
          resolve()
        }),
      )
      server = undefined
      client = undefined
    }
  })

  it('buffers at most `prefetch` pages ahead of a slow consumer', async () => {
    const w = await wire({ delay: () => 2 })
    let page = 0
    for await (const p of w.client.conversations.messages.list('c1', { limit: LIMIT }, { prefetch: 2 }).pages()) {
      page = p.pagination.page
      w.consumerAt(page)
      await sleep(30) // the consumer is slow: prefetched pages pile up only to the bound
    }
    expect(page).toBe(PAGES)
    for (let consumed = 1; consumed <= PAGES; consumed++) expect(w.askedBefore(consumed)).toBeLessThanOrEqual(consumed + 2)
  })

  it('breaking out of the loop aborts the pages in flight and asks for no more', async () => {
    const w = await wire({ delay: (page) => (page === 1 ? 5 : 5_000) })
    const started = performance.now()
    for await (const message of w.client.conversations.messages.list('c1', { limit: LIMIT }, { prefetch: 3 })) {
      // The consumer works on page 1 until pages 2-4 have reached the server (evidence, not a sleep:
      // on a loaded machine 60 ms of sleeps could end before they were sent).
      await until(() => [2, 3, 4].every((page) => w.asked.includes(page)))
      if (message.id === 'm2') break
    }
    await until(() => w.aborted.length >= 3) // the aborts reach the server (a close crosses the loopback)
    expect(performance.now() - started).toBeLessThan(4_000) // did not wait for the 5 s pages
    expect(w.asked.sort()).toEqual([1, 2, 3, 4])
    expect(w.aborted.sort()).toEqual([2, 3, 4])
  })

  it('an error on page k surfaces when the consumer reaches page k, after every item before it', async () => {
    const w = await wire({ status: (page) => (page === 4 ? 500 : 200), delay: (page) => (page === 4 ? 1 : 20) })
    const ids: string[] = []
    let error: unknown
    try {
      for await (const message of w.client.conversations.messages.list('c1', { limit: LIMIT }, { prefetch: 4 })) ids.push(message.id)
    } catch (caught) {
      error = caught
    }
    expect(ids).toEqual(expectedIds.slice(0, 3 * LIMIT))
    expect(error).toBeInstanceOf(InternalServerError)
  })

  it('stops at the total_pages of the latest response, even when it shrinks mid-way', async () => {
    // Once page 1 was asked for, the list loses its last pages (the messages after 15 are deleted).
    const w = await wire({ totalPages: (_page, request) => (request >= 2 ? 3 : PAGES), delay: () => 5 })
    const ids: string[] = []
    for await (const message of w.client.conversations.messages.list('c1', { limit: LIMIT }, { prefetch: 2 })) ids.push(message.id)
    expect(ids).toEqual(expectedIds.slice(0, 3 * LIMIT))
  })

  it("the caller's signal aborts the whole iteration, prefetched pages included", async () => {
    const w = await wire({ delay: (page) => (page === 1 ? 5 : 5_000) })
    const controller = new AbortController()
    const iteration = (async () => {
      for await (const _ of w.client.conversations.messages.list('c1', { limit: LIMIT }, { prefetch: 2, signal: controller.signal })) {
        // consume
      }
    })()
    // Pages 2 and 3 prefetched: they have reached the server (evidence, not a sleep: a 100 ms sleep
    // ended before they were sent once, in a loaded CI run).
    await until(() => w.asked.includes(2) && w.asked.includes(3))
    controller.abort()
    await expect(iteration).rejects.toMatchObject({ name: 'APIUserAbortError' })
    await until(() => w.aborted.length >= 2) // the aborts reach the server (a close crosses the loopback)
    expect(w.aborted.sort()).toEqual([2, 3])
  })
})
