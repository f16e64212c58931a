// The nightly benchmark's floor: the incremental pass a careful user writes by hand over raw undici
// (issue 16: "list the conversations, compare message_count with what they stored, read from the
// page that holds the first new message"). Same Agent, headers and body as every floor
// (bench/floor.ts), `body.json()`, no validation. It keeps at most `concurrency` requests in flight
// for the whole pass through one FIFO limiter: the conversation-list pages first (page 1, then
// every other page at once: the scan is parallel, as in listNew), then, as each list page arrives,
// the message pages of its conversations that grew, from the page holding the first new message to
// the last. It yields the new messages of each conversation in nested-loop order and returns the
// state to store for the next night (per conversation: the messages stored).
import type { Dispatcher } from 'undici'
import { floorGet } from '../floor.ts'
import type { RawMessage } from './raw-pool.ts'

export interface RawIncrementalOptions {
  dispatcher: Dispatcher
  origin: string
  headers: Readonly<Record<string, string>>
  /** The credentials' JSON, sent as the body of every GET. */
  body: string
  concurrency: number
  limit: number
  /** What the last run stored: messages per conversation id. */
  stored: ReadonlyMap<string, number>
  /** Filled with the state to store after this run: messages per conversation id. */
  next: Map<string, number>
}

interface ConversationsPage {
  data: { id: string; message_count: number }[]
  pagination: { total_pages: number }
}
interface MessagesPage {
  data: RawMessage[]
}

/** A FIFO limiter: at most `n` tasks run at once (what users reach for p-limit to do). */
function limiter(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0
  const queue: (() => void)[] = []
  const next = (): void => {
    if (active >= n) return
    const start = queue.shift()
    if (start === undefined) return
    active++
    start()
  }
  return (task) =>
    new Promise((resolve, reject) => {
      queue.push(() => {
        task()
          .then(resolve, reject)
          .finally(() => {
            active--
            next()
          })
      })
      next()
    })
}

/** Yields the new messages (as slices of pages) of every conversation that grew, in nested-loop order. */
export async function* rawIncrementalPages(options: RawIncrementalOptions): AsyncGenerator<readonly RawMessage[], void, undefined> {
  const { limit, stored, next } = options
  const run = limiter(options.concurrency)
  const get = <T>(path: string): Promise<T> =>
    run(() => floorGet<T>(options.dispatcher, options.origin, path, options.body, options.headers))
  const listPath = (page: number): string => `/rest/v1/conversations?page=${page}&limit=100`

  // A list page becomes its message-page requests, started (queued on the limiter) as soon as it arrives.
  const plan = (page: ConversationsPage): Promise<readonly RawMessage[]>[] => {
    const jobs: Promise<readonly RawMessage[]>[] = []
    for (const c of page.data) {
      next.set(c.id, c.message_count)
      const had = stored.get(c.id) ?? 0
      if (c.message_count === had) continue
      // Fewer messages than stored: something was deleted; read it all again.
      const from = c.message_count > had ? had : 0
      const last = Math.ceil(c.message_count / limit)
      for (let p = Math.floor(from / limit) + 1; p <= last; p++) {
        const skip = p === Math.floor(from / limit) + 1 ? from % limit : 0
        const path = `/rest/v1/conversations/${encodeURIComponent(c.id)}/messages?page=${p}&limit=${limit}`
        const job = get<MessagesPage>(path).then((m) => (skip === 0 ? m.data : m.data.slice(skip)))
        job.catch(() => undefined) // awaited in order below; a failure surfaces there
        jobs.push(job)
      }
    }
    return jobs
  }

  const first = await get<ConversationsPage>(listPath(1))
  const pages: Promise<Promise<readonly RawMessage[]>[]>[] = [Promise.resolve(plan(first))]
  for (let p = 2; p <= first.pagination.total_pages; p++) {
    const page = get<ConversationsPage>(listPath(p)).then(plan)
    page.catch(() => undefined)
    pages.push(page)
  }
  for (const page of pages) {
    for (const job of await page) yield await job
  }
}
