// The three ways of reading one page of agents that the per-request benchmark compares, and the
// start-up checks that each really sends the credentials in a GET body (and that fetch cannot).
import http from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import axios, { type AxiosInstance } from 'axios'
import { Agent, request } from 'undici'
import { keepAliveDispatcher } from './keepalive.ts'
import * as z from 'zod'
import { agentSchema, ChatServiceClient, paginationSchema } from '../src/index.ts'

export interface ServerInfo {
  url: string
  keyId: string
  keySecret: string
  conversationId: string
}

/** One contender: `call()` reads page 1 of agents (limit 20) and resolves with the item count. */
export interface Contender {
  readonly name: string
  call(): Promise<number>
  close(): Promise<void>
}

/**
 * The floor: undici.request on its own Agent, JSON body on GET, `JSON.parse`, nothing else.
 * With `keepAlive`, the request also passes `reset: false`: by default undici closes the connection
 * after any GET that carries a body (it marks the socket for reset when a method that does not
 * expect a payload sends one), so every default GET here opens a new TCP connection.
 */
export function rawUndici(server: ServerInfo, keepAlive = false): Contender {
  const dispatcher = new Agent({ connections: 64, pipelining: 1 })
  const url = `${server.url}/rest/v1/agents?page=1&limit=20`
  const headers = { 'content-type': 'application/json', accept: 'application/json' }
  const name = keepAlive ? 'raw undici, reset: false' : 'raw undici'
  return {
    name,
    async call() {
      const response = await request(url, {
        method: 'GET',
        headers,
        body: JSON.stringify({ keyId: server.keyId, keySecret: server.keySecret }),
        dispatcher,
        ...(keepAlive ? { reset: false } : {}),
      })
      const text = await response.body.text()
      if (response.statusCode !== 200) throw new Error(`${name}: HTTP ${response.statusCode}: ${text}`)
      const body = JSON.parse(text) as { data: unknown[] }
      return body.data.length
    },
    close: () => dispatcher.close(),
  }
}

/** This SDK, as a user calls it; with `keepAliveFix`, given {@link keepAliveDispatcher} (simulates the suggested fix). */
export function sdk(server: ServerInfo, keepAliveFix = false): Contender & { client: ChatServiceClient } {
  const dispatcher = keepAliveFix ? keepAliveDispatcher() : undefined
  const client = new ChatServiceClient({
    baseUrl: server.url,
    keyId: server.keyId,
    keySecret: server.keySecret,
    logLevel: 'warn',
    ...(dispatcher === undefined ? {} : { dispatcher }),
  })
  return {
    name: keepAliveFix ? 'SDK + reset: false dispatcher' : 'SDK',
    client,
    async call() {
      const page = await client.agents.list({ limit: 20 })
      return page.data.length
    },
    close: async () => {
      await client.close()
      await dispatcher?.close()
    },
  }
}

/** What a user would write instead: axios (keep-alive agent, same pool size) + the SDK's zod schemas, built once. */
export const agentPageSchema = z.object({ data: z.array(agentSchema), pagination: paginationSchema })

export function axiosInstance(baseURL: string): { instance: AxiosInstance; agent: http.Agent } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  const instance = axios.create({ baseURL, httpAgent: agent, headers: { 'content-type': 'application/json', accept: 'application/json' } })
  return { instance, agent }
}

export function axiosClient(server: ServerInfo): Contender {
  const { instance, agent } = axiosInstance(server.url)
  return {
    name: 'axios + zod',
    async call() {
      const response = await instance.get<unknown>('/rest/v1/agents', {
        params: { page: 1, limit: 20 },
        data: { keyId: server.keyId, keySecret: server.keySecret },
      })
      const page = agentPageSchema.parse(response.data)
      return page.data.length
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
      body: JSON.stringify({ keyId: server.keyId, keySecret: server.keySecret }),
    })
    await response.body?.cancel()
    throw new Error(`global fetch unexpectedly sent a GET with a body (HTTP ${response.status}); update the note in BENCHMARKS.md`)
  } catch (error) {
    if (error instanceof TypeError) return `global fetch cannot send this API's GET requests: it throws ${error.name}: ${error.message}`
    throw error
  }
}
