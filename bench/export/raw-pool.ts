// The export's fair floor: a worker pool written by hand over raw undici, as a careful user would
// write it. Same Agent settings as the SDK's pool (bench/floor.ts), `reset: false`, `body.json()`,
// no validation. It keeps `concurrency` requests in flight for the whole export (conversation-list
// pages included), plans each conversation's pages from its `message_count` (no extra request),
// and hands pages over in nested-loop order. Memory is bounded: at most `window` pages are fetched
// or in flight beyond the one being consumed.
import type { Dispatcher } from 'undici'
import { floorGet } from '../floor.ts'

export interface RawPoolOptions {
  dispatcher: Dispatcher
  origin: string
  headers: Readonly<Record<string, string>>
  /** The credentials' JSON, sent as the body of every GET. */
  body: string
  concurrency: number
  limit: number
  /** Pages fetched ahead of the consumer, at most (default 2 × concurrency). */
  window?: number
}

export interface RawMessage {
  id: string
}
interface MessagesPage {
  data: RawMessage[]
  pagination: { total_pages: number }
}
interface ConversationsPage {
  data: { id: string; message_count: number }[]
  pagination: { total_pages: number }
}

/** Yields the message pages of every conversation, in nested-loop order. */
export async function* rawPoolPages(options: RawPoolOptions): AsyncGenerator<readonly RawMessage[], void, undefined> {
  const { concurrency, limit } = options
  const window = options.window ?? 2 * concurrency
  const get = <T>(path: string): Promise<T> => floorGet<T>(options.dispatcher, options.origin, path, options.body, options.headers)
  /** Message pages to fetch, in nested-loop order; job i of the export is `jobs[i - firstJob]`. */
  const jobs: { path: string; pages: number }[] = []
  let firstJob = 0
  const started = new Map<number, Promise<MessagesPage>>()
  let nextStart = 0
  let nextDeliver = 0
  let inFlight = 0
  let listPage = 0
  let listPages = Number.POSITIVE_INFINITY
  let listing: Promise<void> | undefined
  let failure: Error | undefined

  const fetchList = async (): Promise<void> => {
    const page = await get<ConversationsPage>(`/rest/v1/conversations?page=${++listPage}&limit=${limit}`)
    listPages = page.pagination.total_pages
    for (const c of page.data) {
      const pages = Math.max(1, Math.ceil(c.message_count / limit))
      for (let p = 1; p <= pages; p++)
        jobs.push({ path: `/rest/v1/conversations/${encodeURIComponent(c.id)}/messages?page=${p}&limit=${limit}`, pages })
    }
  }
  // Starts what the limits allow: the next conversation-list page when few jobs are left, else the
  // next message page, while fewer than `concurrency` requests are in flight and the window has room.
  const pump = (): void => {
    while (inFlight < concurrency && failure === undefined) {
      const queued = firstJob + jobs.length - nextStart
      if (listing === undefined && listPage < listPages && queued < window) {
        inFlight++
        listing = fetchList().finally(() => {
          inFlight--
          listing = undefined
          pump()
        })
        listing.catch((error: unknown) => (failure ??= error instanceof Error ? error : new Error(String(error))))
      } else if (queued > 0 && nextStart < nextDeliver + window) {
        const job = jobs[nextStart - firstJob]!
        inFlight++
        const request = get<MessagesPage>(job.path).then((page) => {
          if (Math.max(1, page.pagination.total_pages) !== job.pages) throw new Error(`${job.path}: the data changed under the export`)
          return page
        })
        request
          .catch(() => undefined)
          .finally(() => {
            inFlight--
            pump()
          })
        started.set(nextStart++, request)
      } else {
        return
      }
    }
  }

  try {
    yield* deliver()
  } finally {
    // Leaving early (or failing): start nothing more and let what is in flight finish, so that no
    // request of this export is still running when the caller moves on.
    failure ??= new Error('raw pool: closed')
    await Promise.allSettled([...started.values(), listing])
  }

  async function* deliver(): AsyncGenerator<readonly RawMessage[], void, undefined> {
    for (;;) {
      pump()
      const next = started.get(nextDeliver)
      if (next !== undefined) {
        const page = await next
        started.delete(nextDeliver++)
        // Drop consumed jobs now and then, so the job list stays short.
        if (nextDeliver - firstJob > 1024) {
          jobs.splice(0, nextDeliver - firstJob)
          firstJob = nextDeliver
        }
        yield page.data
      } else if (listing !== undefined) {
        await listing
      } else if (failure !== undefined) {
        throw failure
      } else if (listPage >= listPages && nextDeliver === firstJob + jobs.length) {
        return
      } else {
        throw new Error('raw pool: nothing in flight and nothing to do (a bug in the pool)')
      }
    }
  }
}
