// The ways of reading one page that the per-request and allocation benchmarks compare, and the
// start-up checks that each really sends the credentials in a GET body (and that fetch cannot).
import http from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { basename, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import axios, { type AxiosInstance } from 'axios'
import { Agent, request } from 'undici'
import * as z from 'zod'
import { ChatServiceClient } from 'chat-service-sdk'
import type { ServerInfo } from './fake.ts'
import { credentialsBody, floorAgent, floorGet, strictFloorGet } from './floor.ts'

/** One page every contender reads: where it is, how many items it holds, how the SDK asks for it. */
export interface PageTarget {
  readonly label: string
  /** Path with query string, below the origin. */
  readonly path: string
  readonly items: number
  sdkCall(client: ChatServiceClient): Promise<{ readonly data: readonly unknown[] }>
}

/**
 * `GET /rest/v1/agents?limit=20&page=1`: the per-request page (20 agents, 2.8 KB). The query in the
 * order the SDK writes it (bench/wire-check.ts checks that floor and SDK send the same bytes).
 */
export function agentsPage(): PageTarget {
  return { label: '20 agents', path: '/rest/v1/agents?limit=20&page=1', items: 20, sdkCall: (c) => c.agents.list({ limit: 20 }) }
}

/** `GET /rest/v1/conversations/:id/messages?limit=100&page=1`: a full page of 100 messages (17.5 KB), the query as the SDK writes it. */
export function messagesPage(server: ServerInfo): PageTarget {
  const id = server.conversationId
  return {
    label: '100 messages',
    path: `/rest/v1/conversations/${encodeURIComponent(id)}/messages?limit=100&page=1`,
    items: 100,
    sdkCall: (c) => c.conversations.messages.list(id, { limit: 100 }),
  }
}

/** One contender: `call()` reads the page once and resolves with its item count. */
export interface Contender {
  readonly name: string
  call(): Promise<number>
  close(): Promise<void>
}

export const FLOOR = 'raw undici (floor)'
export const SDK = 'SDK'
export const AXIOS = 'axios + zod'
export const OLD_FLOOR = 'raw undici, no reset: false (old floor, NOT fair)'
export const STRICT_FLOOR = 'raw undici dispatch() handler (strict floor, reference)'

/** The floor (bench/floor.ts): the SDK's pool settings, `reset: false`, the SDK's headers, `body.json()`. */
export function rawFloor(server: ServerInfo, page: PageTarget): Contender {
  const agent = floorAgent()
  const body = credentialsBody(server)
  return {
    name: FLOOR,
    async call() {
      const parsed = await floorGet<{ data: unknown[] }>(agent, server.url, page.path, body)
      return parsed.data.length
    },
    close: () => agent.close(),
  }
}

/** The strict floor (bench/floor.ts `strictFloorGet`): the same agent, undici's `dispatch()` with a minimal handler. */
export function strictFloor(server: ServerInfo, page: PageTarget): Contender {
  const agent = floorAgent()
  const body = credentialsBody(server)
  return {
    name: STRICT_FLOOR,
    async call() {
      const parsed = await strictFloorGet<{ data: unknown[] }>(agent, server.url, page.path, body)
      return parsed.data.length
    },
    close: () => agent.close(),
  }
}

/**
 * The floor of issue 5, kept only as a labelled control: undici's defaults close the connection
 * after every GET that carries a body, so it reconnects on every call and flatters the SDK.
 */
export function oldFloor(server: ServerInfo, page: PageTarget): Contender {
  const agent = new Agent({ connections: 64, pipelining: 1 })
  const url = `${server.url}${page.path}`
  return {
    name: OLD_FLOOR,
    async call() {
      const response = await request(url, {
        method: 'GET',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ keyId: server.keyId, keySecret: server.keySecret }),
        dispatcher: agent,
      })
      const text = await response.body.text()
      if (response.statusCode !== 200) throw new Error(`${OLD_FLOOR}: HTTP ${response.statusCode}: ${text}`)
      return (JSON.parse(text) as { data: unknown[] }).data.length
    },
    close: () => agent.close(),
  }
}

/** This SDK, as a user calls it (default client, the BUILT package). */
export function sdk(server: ServerInfo, page: PageTarget): Contender {
  const client = new ChatServiceClient({ baseUrl: server.url, keyId: server.keyId, keySecret: server.keySecret, logLevel: 'warn' })
  return {
    name: SDK,
    async call() {
      return (await page.sdkCall(client)).data.length
    },
    close: () => client.close(),
  }
}

/**
 * The SDK built from another version (bench/baseline.ts builds one into `dir`): its client, loaded
 * from `dir/dist/index.js`, with the same options as {@link sdk}. Named `SDK at <dir's name>`.
 */
export async function sdkFrom(dir: string, server: ServerInfo, page: PageTarget): Promise<Contender> {
  const module = (await import(pathToFileURL(join(dir, 'dist', 'index.js')).href)) as { ChatServiceClient: typeof ChatServiceClient }
  const client = new module.ChatServiceClient({ baseUrl: server.url, keyId: server.keyId, keySecret: server.keySecret, logLevel: 'warn' })
  return {
    name: `SDK at ${basename(dir)}`,
    async call() {
      return (await page.sdkCall(client)).data.length
    },
    close: () => client.close(),
  }
}

/**
 * The contender a command line names: `floor`, `sdk`, `strict`, `axios`, `old-floor`, or
 * `sdk-at:DIR` (the SDK built into DIR by bench/baseline.ts).
 */
export async function contenderNamed(spec: string, server: ServerInfo, page: PageTarget): Promise<Contender> {
  if (spec.startsWith('sdk-at:')) return sdkFrom(spec.slice('sdk-at:'.length), server, page)
  const makers: Record<string, () => Contender> = {
    floor: () => rawFloor(server, page),
    sdk: () => sdk(server, page),
    strict: () => strictFloor(server, page),
    axios: () => axiosClient(server),
    'old-floor': () => oldFloor(server, page),
  }
  const make = makers[spec]
  if (make === undefined) throw new Error(`unknown contender ${spec}: one of ${Object.keys(makers).join(', ')} or sdk-at:DIR`)
  return make()
}

/**
 * What a user would hand-write without the SDK: axios with a keep-alive agent (64 sockets) and a
 * zod schema of their own (built once). Written by hand, not taken from the SDK: a user without the
 * SDK has no schemas to import.
 */
const agentPageSchema = z.object({
  data: z.array(z.object({ id: z.string(), name: z.string(), active: z.boolean(), created_at: z.string(), updated_at: z.string() })),
  pagination: z.object({ page: z.number(), limit: z.number(), total: z.number(), total_pages: z.number() }),
})

export function axiosInstance(baseURL: string): { instance: AxiosInstance; agent: http.Agent } {
  // `timeout` 4 s closes idle pooled sockets before the fake's 5 s keep-alive timeout does: else a
  // socket the server is closing can be reused at that moment ("socket hang up"), as a careful user
  // would also configure. (undici does this by itself from the server's `keep-alive: timeout=5`.)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 })
  const instance = axios.create({ baseURL, httpAgent: agent, headers: { 'content-type': 'application/json', accept: 'application/json' } })
  return { instance, agent }
}

/** axios + zod reading the agents page (the per-request benchmark only). */
export function axiosClient(server: ServerInfo): Contender {
  const { instance, agent } = axiosInstance(server.url)
  const data = { keyId: server.keyId, keySecret: server.keySecret }
  return {
    name: AXIOS,
    async call() {
      const response = await instance.get<unknown>('/rest/v1/agents', { params: { page: 1, limit: 20 }, data })
      return agentPageSchema.parse(response.data).data.length
    },
    close: async () => {
      agent.destroy()
    },
  }
}

/**
 * Sends one axios GET with a JSON body to a throwaway node:http server on 127.0.0.1 and checks the
 * raw bytes that arrived: method GET, JSON content-type, and exactly the body given. Throws if not.
 */
export async function verifyAxiosSendsGetBody(): Promise<string> {
  let seen: { method: string | undefined; contentType: string | undefined; body: string } | undefined
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      seen = { method: req.method, contentType: req.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  const { instance, agent } = axiosInstance(`http://127.0.0.1:${port}`)
  const sent = { keyId: 'probe-key', keySecret: 'probe-secret' }
  try {
    await instance.get('/rest/v1/agents', { params: { page: 1, limit: 20 }, data: sent })
  } finally {
    agent.destroy()
    server.close()
  }
  const expected = JSON.stringify(sent)
  if (seen?.method !== 'GET' || seen.body !== expected || !(seen.contentType ?? '').includes('application/json')) {
    throw new Error(
      `axios did NOT send the JSON body on GET at the wire (saw ${JSON.stringify(seen)}; expected GET with body ${expected}). ` +
        'The axios contender would not be comparable; stopping.',
    )
  }
  return `axios ${axios.VERSION} sends a GET body: verified at the wire (GET, ${seen.contentType}, ${seen.body.length}-byte body received intact)`
}

/** Tries global fetch with this API's GET request and returns what happened (it is expected to throw before sending). */
export async function tryFetchGetBody(server: ServerInfo): Promise<string> {
  try {
    const response = await fetch(`${server.url}/rest/v1/agents?page=1&limit=20`, {
      method: 'GET',
      headers: { 'content-type': 'application/json' },
      body: credentialsBody(server),
    })
    await response.body?.cancel()
    throw new Error(`global fetch unexpectedly sent a GET with a body (HTTP ${response.status}); update the note in BENCHMARKS.md`)
  } catch (error) {
    if (error instanceof TypeError) return `global fetch cannot send this API's GET requests: it throws ${error.name}: ${error.message}`
    throw error
  }
}
