/**
 * A loopback `node:http` server that serves one company's conversations and messages (spec,
 * Endpoints 5 and 6) from a model the test can change, for the `listAll` tests that need exact
 * control at the wire: it counts the requests open at the server at every moment (and the peak),
 * knows which requests were answered and which the client closed before the answer, and lets a
 * test delay, hold back or fail any single page. Credentials are not checked (the fake service's
 * tests cover them). Do not enable msw in a file that uses it.
 */
import { once } from 'node:events'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

/** A conversation as served: its messages (ids, oldest first) and, if it should lie, its `message_count`. */
export interface ModelConversation {
  readonly id: string
  messages: string[]
  /** `message_count` to report; default `messages.length`. */
  messageCount?: number
  /** `updated_at` to report; default `2024-06-01T00:00:00.000Z`. */
  updatedAt?: string
}

/** One list request as it arrived. */
export interface PageRequest {
  readonly kind: 'conversations' | 'messages'
  /** For `messages`: the conversation's id, decoded. */
  readonly conversationId?: string
  readonly page: number
  readonly limit: number
  /** Arrival order, from 0. */
  readonly seq: number
  /** Set once the reply has been handed to the socket in full. */
  answered: boolean
  /** Set when the connection closed before the reply was complete (the client aborted). */
  aborted: boolean
}

/** What to do with a request: wait for `hold` and/or `delayMs`, then answer `status` (an error body) or the page. */
export interface Decision {
  readonly status?: number
  readonly delayMs?: number
  readonly hold?: Promise<unknown>
}

export interface CompanyServer {
  readonly origin: string
  /** The served model, in list order; change it to change the data. */
  readonly conversations: ModelConversation[]
  /** Every request, in order of arrival. */
  readonly requests: PageRequest[]
  /** Requests open at the server right now (arrived; reply not yet complete; client still there). */
  readonly inFlight: number
  /** Most requests ever open at once. */
  readonly peakInFlight: number
  /** Decides each request's fate (default: answer at once). */
  decide(decider: (request: PageRequest) => Decision | undefined): void
  /** Called after each reply has been handed to the socket in full. */
  onAnswered(listener: (request: PageRequest) => void): void
  close(): Promise<void>
}

/** The message record the server serves for a message id. */
export function servedMessage(id: string, conversationId: string, index: number): Record<string, unknown> {
  return {
    id,
    content: `text of ${id}`,
    role: index % 2 === 0 ? 'user' : 'assistant',
    conversation_id: conversationId,
    created_at: new Date(Date.UTC(2024, 0, 1) + index * 1000).toISOString(),
  }
}

/** A model of conversations `c000`, `c001`, ... with `sizes[i]` messages each (ids `c000-m0000`, ...). */
export function modelOf(sizes: readonly number[]): ModelConversation[] {
  return sizes.map((size, i) => {
    const id = `c${String(i).padStart(3, '0')}`
    return { id, messages: Array.from({ length: size }, (_, m) => `${id}-m${String(m).padStart(4, '0')}`) }
  })
}

/** Message ids in nested-loop order. */
export function nestedOrder(model: readonly ModelConversation[]): string[] {
  return model.flatMap((conversation) => conversation.messages)
}

export async function startCompanyServer(model: ModelConversation[]): Promise<CompanyServer> {
  const requests: PageRequest[] = []
  let decider: (request: PageRequest) => Decision | undefined = () => undefined
  let answeredListener: (request: PageRequest) => void = () => undefined
  let inFlight = 0
  let peak = 0
  const sockets = new Set<Socket>()
  // Ends every wait on close, so that no timer of a held reply outlives the test.
  const closing = new AbortController()
  const closed = new Promise<void>((resolve) => {
    closing.signal.addEventListener('abort', () => {
      resolve()
    })
  })

  const pageBody = (request: PageRequest): { status: number; body: unknown } => {
    const { page, limit } = request
    const slice = <T>(items: readonly T[]): T[] => items.slice((page - 1) * limit, page * limit)
    const pagination = (total: number): Record<string, number> => ({ page, limit, total, total_pages: Math.ceil(total / limit) })
    if (request.kind === 'conversations') {
      const data = slice(model).map((conversation, offset) => ({
        id: conversation.id,
        title: `Title of ${conversation.id}`,
        customer_user_id: 'cu_1',
        message_count: conversation.messageCount ?? conversation.messages.length,
        created_at: new Date(Date.UTC(2024, 0, 1) + ((page - 1) * limit + offset) * 1000).toISOString(),
        updated_at: conversation.updatedAt ?? '2024-06-01T00:00:00.000Z',
      }))
      return { status: 200, body: { data, pagination: pagination(model.length) } }
    }
    const conversation = model.find((c) => c.id === request.conversationId)
    if (conversation === undefined) return { status: 404, body: { error: { status: 404, message: 'Conversation not found' } } }
    const first = (page - 1) * limit
    const data = slice(conversation.messages).map((id, offset) => servedMessage(id, conversation.id, first + offset))
    return {
      status: 200,
      body: {
        data,
        pagination: pagination(conversation.messages.length),
        conversation: { id: conversation.id, title: `Title of ${conversation.id}` },
      },
    }
  }

  const answer = async (request: PageRequest, res: ServerResponse): Promise<void> => {
    const decision = decider(request) ?? {}
    if (decision.hold !== undefined) await Promise.race([decision.hold, closed])
    if (decision.delayMs !== undefined) await sleep(decision.delayMs, undefined, { signal: closing.signal }).catch(() => undefined)
    if (res.destroyed || closing.signal.aborted) return
    const planned = pageBody(request)
    const status = decision.status ?? planned.status
    const body =
      decision.status === undefined
        ? planned.body
        : { error: { status, message: status === 404 ? 'Conversation not found' : 'Scripted failure' } }
    const text = JSON.stringify(body)
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) })
    res.end(text)
  }

  const server: Server = createServer((req, res) => {
    inFlight++
    peak = Math.max(peak, inFlight)
    const url = new URL(req.url ?? '/', 'http://placeholder.invalid')
    const messages = /^\/rest\/v1\/conversations\/([^/]+)\/messages$/.exec(url.pathname)
    const request: PageRequest = {
      kind: messages === null ? 'conversations' : 'messages',
      ...(messages === null ? {} : { conversationId: decodeURIComponent(messages[1] as string) }),
      page: Number(url.searchParams.get('page') ?? '1'),
      limit: Number(url.searchParams.get('limit') ?? '20'),
      seq: requests.length,
      answered: false,
      aborted: false,
    }
    requests.push(request)
    // Open until the whole reply is handed to the socket ('finish'), or until the client hangs up
    // first ('close' without 'finish'), whichever comes first.
    res.on('finish', () => {
      request.answered = true
      inFlight--
      answeredListener(request)
    })
    res.on('close', () => {
      if (request.answered) return
      request.aborted = true
      inFlight--
    })
    res.on('error', () => undefined)
    req.resume()
    req.on('end', () => {
      answer(request, res).catch(() => res.destroy())
    })
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    conversations: model,
    requests,
    get inFlight() {
      return inFlight
    },
    get peakInFlight() {
      return peak
    },
    decide: (next) => {
      decider = next
    },
    onAnswered: (listener) => {
      answeredListener = listener
    },
    close: async () => {
      closing.abort()
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      })
    },
  }
}
