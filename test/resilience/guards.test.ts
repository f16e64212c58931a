// Transport guards and logging (issue 4): browser refusal, prototype-safe JSON, log levels,
// the CHAT_SERVICE_LOG variable, and a logger that throws.
import { createServer, type Server } from 'node:http'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ChatServiceClient, ChatServiceError, type ClientOptions, type Logger } from 'chat-service-sdk'
import { detectRuntime } from '../../src/runtime.ts'

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
  /**
   * Runs `construct` with `globalThis.process` replaced by `fake` (only for that synchronous call:
   * the constructor reads the runtime once), as if the SDK were loaded outside Node.js.
   */
  function asIf<T>(fake: object, construct: () => T): T {
    const saved = Object.getOwnPropertyDescriptor(globalThis, 'process')
    Object.defineProperty(globalThis, 'process', { value: fake, configurable: true, writable: true })
    try {
      return construct()
    } finally {
      if (saved) Object.defineProperty(globalThis, 'process', saved)
    }
  }
  const options = { baseUrl: 'https://chat.example.com', ...base }

  it('refuses a real browser (window and document, no Node.js), naming why, unless dangerouslyAllowBrowser is true', async () => {
    vi.stubGlobal('window', {})
    vi.stubGlobal('document', {})
    const browser = { env: {}, versions: {} } // what a bundler's process shim looks like
    expect(() => asIf(browser, () => new ChatServiceClient(options))).toThrow(ChatServiceError)
    expect(() => asIf(browser, () => new ChatServiceClient(options))).toThrow(
      /^ChatServiceClient refuses to run in a browser\. chat-service-sdk runs on a server only .*must never reach an end user's device .*fetch\(\) cannot send\. .*dangerouslyAllowBrowser: true\.$/,
    )
    const client = asIf(browser, () => new ChatServiceClient({ ...options, dangerouslyAllowBrowser: true }))
    expect(client.baseUrl).toBe('https://chat.example.com/rest/v1')
    await client.close()
  })

  it('starts in Node.js whatever DOM globals a test environment adds (jsdom, happy-dom)', async () => {
    vi.stubGlobal('window', {})
    vi.stubGlobal('document', {})
    const client = new ChatServiceClient(options)
    expect(client.baseUrl).toBe('https://chat.example.com/rest/v1')
    await client.close()
  })

  it('refuses an Electron renderer (Node.js in an end user’s window), and Bun even with dangerouslyAllowBrowser', () => {
    const renderer = { env: {}, type: 'renderer', versions: { node: '22.19.0', electron: '38.0.0' } }
    expect(() => asIf(renderer, () => new ChatServiceClient(options))).toThrow('refuses to run in an Electron renderer process')
    const bun = { env: {}, versions: { node: '24.3.0', bun: '1.4.5' } }
    expect(() => asIf(bun, () => new ChatServiceClient({ ...options, dangerouslyAllowBrowser: true }))).toThrow(
      /^chat-service-sdk does not run on Bun 1\.4\.5: Bun replaces the undici package with its own.*Run the SDK on Node\.js 22\.19 or later\.$/,
    )
  })

  it('detectRuntime tells runtimes apart by Node.js first, then browser, worker and edge globals', () => {
    const node = { versions: { node: '24.0.0' } }
    expect(detectRuntime({ process: node })).toBe('node')
    expect(detectRuntime({ process: node, window: {}, document: {} })).toBe('node') // jsdom, happy-dom
    expect(detectRuntime({ process: { versions: { node: '22.19.0', bun: '1.4.5' } } })).toBe('bun')
    expect(detectRuntime({ process: { type: 'renderer', versions: { node: '22.19.0', electron: '38.0.0' } } })).toBe('electron-renderer')
    expect(detectRuntime({ process: { type: 'browser', versions: { node: '22.19.0', electron: '38.0.0' } } })).toBe('node') // Electron's main process
    expect(detectRuntime({ window: {}, document: {} })).toBe('browser')
    expect(detectRuntime({ process: { versions: {} }, window: {}, document: {} })).toBe('browser') // a bundler's process shim
    expect(detectRuntime({ WorkerGlobalScope: function WorkerGlobalScope() {}, self: {} })).toBe('worker')
    expect(detectRuntime({ EdgeRuntime: 'edge-runtime' })).toBe('edge')
    expect(detectRuntime({ navigator: { userAgent: 'Cloudflare-Workers' } })).toBe('edge')
    expect(detectRuntime({})).toBe('unknown')
    expect(detectRuntime()).toBe('node')
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
    const before = performance.now()
    await client.agents.list()
    const took = performance.now() - before
    await client.close()
    expect(lines).toHaveLength(1)
    expect(lines[0]?.level).toBe('debug')
    expect(lines[0]?.text).toMatch(/^chat-service-sdk: GET \/rest\/v1\/agents\?page=1 → 200 in \d+ ms \(attempt 1\)$/)
    // The attempt's own duration: within the call (timed from the attempt, not from some earlier moment).
    const ms = Number(/ in (\d+) ms /.exec(lines[0]?.text ?? '')?.[1])
    expect(ms).toBeGreaterThanOrEqual(0)
    expect(ms).toBeLessThanOrEqual(Math.ceil(took))
  })

  it.each<[NonNullable<ClientOptions['logLevel']>, number]>([
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
