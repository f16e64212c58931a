// Transport guards and logging (issue 4): browser refusal, prototype-safe JSON, log levels,
// the CHAT_SERVICE_LOG variable, and a logger that throws.
import { createServer, type Server } from 'node:http'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ChatServiceClient, ChatServiceError, type Logger, type LogLevel } from 'chat-service-sdk'

let server: Server | undefined
afterEach(async () => {
  vi.unstubAllGlobals()
  vi.unstubAllEnvs()
  await new Promise<void>((resolve) => {
    if (server === undefined) resolve()
    else
      server.close(() => {
        resolve()
      })
  })
  server = undefined
})

/** A loopback server answering every request with `body` (JSON) and status 200. */
async function serve(body: unknown, status = 200): Promise<string> {
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.statusCode = status
      res.setHeader('content-type', 'application/json')
      res.end(typeof body === 'string' ? body : JSON.stringify(body))
    })
  })
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`
}

const base = { keyId: 'key', keySecret: 'secret-value' }
const emptyPage = { data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } }

describe('browser guard', () => {
  it('refuses to construct where `window` exists, naming the reason', () => {
    vi.stubGlobal('window', {})
    expect(() => new ChatServiceClient({ baseUrl: 'https://chat.example.com', ...base })).toThrow(ChatServiceError)
    expect(() => new ChatServiceClient({ baseUrl: 'https://chat.example.com', ...base })).toThrow(/key secret must stay on your server/)
  })

  it('refuses where `document` exists, unless dangerouslyAllowBrowser is true', async () => {
    vi.stubGlobal('document', {})
    expect(() => new ChatServiceClient({ baseUrl: 'https://chat.example.com', ...base })).toThrow(ChatServiceError)
    const client = new ChatServiceClient({ baseUrl: 'https://chat.example.com', ...base, dangerouslyAllowBrowser: true })
    expect(client.baseUrl).toBe('https://chat.example.com/rest/v1')
    await client.close()
  })
})

describe('prototype safety', () => {
  it('__proto__ and constructor keys in a response stay plain data and pollute nothing', async () => {
    const raw = `{"data":[{"id":"u1","external_id":"e1","name":"n","email":null,"active":true,"created_at":"t","last_seen_at":null,
      "metadata":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted2":true}},"plain":1},
      "__proto__":{"isAdmin":true}}],"pagination":{"page":1,"limit":20,"total":1,"total_pages":1}}`
    const client = new ChatServiceClient({ baseUrl: await serve(raw), ...base })
    const page = await client.customerUsers.list()
    await client.close()
    const user = page.data[0]
    expect(user).toBeDefined()
    expect(Object.getPrototypeOf(user)).toBe(Object.prototype)
    expect((user as unknown as { isAdmin?: unknown }).isAdmin).toBeUndefined()
    expect(Object.keys(user?.metadata ?? {})).toEqual(['__proto__', 'constructor', 'plain']) // kept, not dropped
    expect(Object.getOwnPropertyDescriptor(user?.metadata, '__proto__')?.value).toEqual({ polluted: true })
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined()
    expect(({} as { polluted2?: unknown }).polluted2).toBeUndefined()
    expect(({} as { isAdmin?: unknown }).isAdmin).toBeUndefined()
  })
})

describe('logging', () => {
  function recorder(): { logger: Logger; lines: { level: string; text: string }[] } {
    const lines: { level: string; text: string }[] = []
    const at = (level: string) => (text: string) => {
      lines.push({ level, text })
    }
    return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines }
  }

  it('debug logs every attempt with method, path, status, duration and attempt number', async () => {
    const { logger, lines } = recorder()
    const client = new ChatServiceClient({ baseUrl: await serve(emptyPage), ...base, logger, logLevel: 'debug' })
    await client.agents.list()
    await client.close()
    expect(lines).toHaveLength(1)
    expect(lines[0]?.level).toBe('debug')
    expect(lines[0]?.text).toMatch(/^chat-service-sdk: GET \/rest\/v1\/agents\?page=1 → 200 in \d+ ms \(attempt 1\)$/)
  })

  it.each<[LogLevel, number]>([
    ['off', 0],
    ['warn', 0],
    ['info', 1], // the retry notice
    ['debug', 3], // two attempts and the retry notice
  ])('level %s logs %i lines for one retried call', async (logLevel, expected) => {
    let calls = 0
    server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        calls++
        res.statusCode = calls === 1 ? 503 : 200
        res.setHeader('retry-after-ms', '1')
        res.end(JSON.stringify(calls === 1 ? {} : emptyPage))
      })
    })
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
    const { logger, lines } = recorder()
    const client = new ChatServiceClient({
      baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      ...base,
      logger,
      logLevel,
    })
    await client.agents.list()
    await client.close()
    expect(lines).toHaveLength(expected)
  })

  it('CHAT_SERVICE_LOG sets the level when the option is absent; the option wins', async () => {
    vi.stubEnv('CHAT_SERVICE_LOG', 'DEBUG')
    const url = await serve(emptyPage)
    const fromEnv = recorder()
    const a = new ChatServiceClient({ baseUrl: url, ...base, logger: fromEnv.logger })
    await a.agents.list()
    await a.close()
    expect(fromEnv.lines).toHaveLength(1)
    const fromOption = recorder()
    const b = new ChatServiceClient({ baseUrl: url, ...base, logger: fromOption.logger, logLevel: 'off' })
    await b.agents.list()
    await b.close()
    expect(fromOption.lines).toHaveLength(0)
  })

  it('a logger that throws does not break the call', async () => {
    const throwing: Logger = {
      debug: () => {
        throw new Error('logger down')
      },
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
    }
    const client = new ChatServiceClient({ baseUrl: await serve(emptyPage), ...base, logger: throwing, logLevel: 'debug' })
    await expect(client.agents.list()).resolves.toMatchObject({ data: [] })
    await client.close()
  })

  it('an object that is not a logger is refused at construction', () => {
    expect(
      () => new ChatServiceClient({ baseUrl: 'https://chat.example.com', ...base, logger: { info: () => undefined } as unknown as Logger }),
    ).toThrow(/debug, info, warn and error/)
  })
})
