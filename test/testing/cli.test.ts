// `chat-service-fake`, the package's command: what it prints and serves (run in this process,
// through command.ts), and the process a user starts (the bin from source; the packed bin is the
// same file built): stopped by a signal, with its exit status.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { EventEmitter, once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { describe, expect, it, vi } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import { generateDataset, type FakeServerHandle } from 'chat-service-sdk/testing'
import { runCommand, stopOnSignals, type CommandResult } from '../../src/testing/command.ts'

const CLI = fileURLToPath(new URL('../../src/testing/cli.ts', import.meta.url))

interface Run {
  child: ChildProcessWithoutNullStreams
  stdout: () => string
  stderr: () => string
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

function start(args: string[]): Run {
  const child = spawn(process.execPath, ['--no-warnings', CLI, ...args])
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exit = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }))
  return { child, stdout: () => stdout, stderr: () => stderr, exit }
}

/** Resolves once stdout contains `text` (rejects if the process exits first). */
async function waitFor(run: Run, text: string): Promise<string> {
  while (!run.stdout().includes(text)) {
    const exited = await Promise.race([once(run.child.stdout, 'data').then(() => false), run.exit.then(() => true)])
    if (exited && !run.stdout().includes(text)) throw new Error(`exited before printing ${text}: ${run.stderr()}`)
  }
  return run.stdout()
}

/** The `NAME=value` lines the command prints for a .env file. */
function envLines(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/^(CHAT_SERVICE_[A-Z_]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]))
}

/** Runs the command in this process, capturing what it writes. */
async function runInProcess(args: string[]): Promise<{ result: CommandResult; out: string; err: string }> {
  let out = ''
  let err = ''
  const result = await runCommand(args, { out: (text) => (out += text), err: (text) => (err += text) })
  return { result, out, err }
}

/** The server of a run that started one. */
function serverOf(result: CommandResult): FakeServerHandle {
  if (!('server' in result)) throw new Error(`expected a running server, got exit status ${result.exitCode}`)
  return result.server
}

describe('chat-service-fake: what it prints and serves', () => {
  it('serves a generated dataset on loopback and prints the URL, the key pair and .env lines for it', async () => {
    const { result, out, err } = await runInProcess(['--port', '0', '--seed', '7'])
    const server = serverOf(result)
    try {
      const env = envLines(out)
      const key = generateDataset({ seed: 7 }).companies[0]!.keys[0]!
      expect(env).toEqual({ CHAT_SERVICE_BASE_URL: server.url, CHAT_SERVICE_KEY_ID: key.keyId, CHAT_SERVICE_KEY_SECRET: key.keySecret })
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(out).toContain(`keySecret  ${key.keySecret}`)
      expect(out).toContain('Press Ctrl-C to stop.')
      expect(err).toBe('')

      const client = new ChatServiceClient({
        baseUrl: env['CHAT_SERVICE_BASE_URL']!,
        keyId: env['CHAT_SERVICE_KEY_ID']!,
        keySecret: env['CHAT_SERVICE_KEY_SECRET']!,
      })
      expect((await client.agents.list()).pagination.total).toBe(5)
      const found = await client.customerUsers.list({ external_id: 'ext_00042' })
      expect(found.data.map((user) => user.external_id)).toEqual(['ext_00042'])
      await client.close()
    } finally {
      await server.close()
    }
  })

  it('--json prints one line of client options and nothing else; the dataset options apply', async () => {
    const args = [
      '--json',
      '--port',
      '0',
      '--agents',
      '2',
      '--customer-users',
      '3',
      '--conversations',
      '1',
      '--messages',
      '4',
      '--latency',
      '1',
    ]
    const { result, out } = await runInProcess(args)
    const server = serverOf(result)
    try {
      expect(out.endsWith('\n') && out.indexOf('\n') === out.length - 1).toBe(true)
      const options = JSON.parse(out) as { baseUrl: string; keyId: string; keySecret: string }
      expect(options).toEqual(server.clientOptions())
      const client = new ChatServiceClient(options)
      expect((await client.agents.list()).pagination.total).toBe(2)
      expect((await client.conversations.messages.list('conv_00001')).pagination.total).toBe(4)
      await client.close()
    } finally {
      await server.close()
    }
  })

  it('--rate-limit RPS/BURST limits each key pair and says so', async () => {
    const { result, out } = await runInProcess(['--port', '0', '--rate-limit', '0.5/2'])
    const server = serverOf(result)
    try {
      expect(out).toContain('Rate limit per API key pair: 0.5 requests/s, bursts of 2, Retry-After in seconds')
      const { baseUrl, keyId, keySecret } = server.clientOptions()
      const statuses: (number | undefined)[] = []
      for (let i = 0; i < 3; i++) {
        const res = await request(`${baseUrl}/rest/v1/agents`, {
          method: 'GET',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ keyId, keySecret }),
        })
        await res.body.dump()
        statuses.push(res.statusCode)
        if (res.statusCode === 429) expect(res.headers['retry-after']).toBe('2')
      }
      expect(statuses).toEqual([200, 200, 429])
    } finally {
      await server.close()
    }
  })

  it("--rate-limit-endpoint limits one endpoint on its own, within the key pair's limit, and says so", async () => {
    const { result, out } = await runInProcess([
      '--port',
      '0',
      '--rate-limit',
      '100/20',
      '--rate-limit-endpoint',
      'POST /rest/v1/auth/token=0.5',
    ])
    const server = serverOf(result)
    try {
      expect(out).toContain(
        'Rate limit per API key pair: 100 requests/s, bursts of 20, Retry-After in seconds; POST /rest/v1/auth/token alone: 0.5 requests/s, bursts of 1',
      )
      const { baseUrl, keyId, keySecret } = server.clientOptions()
      const send = async (method: string, path: string, extra: object = {}): Promise<number> => {
        const res = await request(`${baseUrl}${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ keyId, keySecret, ...extra }),
        })
        await res.body.dump()
        return res.statusCode
      }
      const token = () => send('POST', '/rest/v1/auth/token', { userId: 'ext_1' })
      expect([await token(), await token(), await send('GET', '/rest/v1/agents')]).toEqual([200, 429, 200])
    } finally {
      await server.close()
    }
  })

  it('--rate-limit-window MS makes it a fixed window; --rate-limit-retry-after none sends 429s without a wait', async () => {
    const { result, out } = await runInProcess([
      '--port',
      '0',
      '--rate-limit',
      '2',
      '--rate-limit-window',
      '60000',
      '--rate-limit-retry-after',
      'none',
    ])
    const server = serverOf(result)
    try {
      expect(out).toContain('Rate limit per API key pair: 120 requests per 60000 ms window (fixed), no Retry-After')
      const { baseUrl, keyId, keySecret } = server.clientOptions()
      const statuses: number[] = []
      const waits: unknown[] = []
      for (let i = 0; i < 121; i++) {
        const res = await request(`${baseUrl}/rest/v1/agents`, {
          method: 'GET',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ keyId, keySecret }),
        })
        await res.body.dump()
        statuses.push(res.statusCode)
        waits.push(res.headers['retry-after'] ?? res.headers['retry-after-ms'])
      }
      // A window that started before the first request may end during the loop: then none is refused.
      const refused = statuses.filter((status) => status === 429).length
      expect(refused).toBeLessThanOrEqual(1)
      expect(waits.every((wait) => wait === undefined)).toBe(true)
    } finally {
      await server.close()
    }
  })

  it.each([
    [['--port', '70000'], '--port must be an integer from 0 to 65535, not "70000"'],
    [['--seed', '1.5'], '--seed must be an integer, not "1.5"'],
    [['--latency=-1'], '--latency must be a number of ms >= 0, not "-1"'],
    [['--messages', 'many'], '--messages must be an integer >= 0, not "many"'],
    [['--customer-users', '0'], 'conversations need at least one customer user'],
    [['--rate-limit', '0'], '--rate-limit must be RPS or RPS/BURST (requests per second > 0, burst an integer >= 1), e.g. 10/20, not "0"'],
    [['--rate-limit', '5/0'], '--rate-limit must be RPS or RPS/BURST'],
    [['--rate-limit', 'fast'], '--rate-limit must be RPS or RPS/BURST'],
    [['--compression', 'zstd'], '--compression must be off, gzip or br, not "zstd"'],
    [['--compression-min-bytes=-1'], '--compression-min-bytes must be an integer >= 0, not "-1"'],
    [['--rate-limit-window', '1000'], '--rate-limit-window, --rate-limit-retry-after and --rate-limit-endpoint need --rate-limit'],
    [['--rate-limit-endpoint', 'GET /rest/v1/agents=1'], '--rate-limit-endpoint need --rate-limit'],
    [['--rate-limit', '5', '--rate-limit-endpoint', 'GET /rest/v1/agents'], "--rate-limit-endpoint must be 'ENDPOINT=RPS[/BURST]'"],
    [['--rate-limit', '5', '--rate-limit-endpoint', 'GET /rest/v1/agents=0'], '--rate-limit-endpoint must be RPS or RPS/BURST'],
    [
      ['--rate-limit', '5', '--rate-limit-endpoint', 'GET /agents=1'],
      'rateLimit.endpoints names "GET /agents", no endpoint of the spec: one of POST /rest/v1/auth/token,',
    ],
    [
      ['--rate-limit', '5', '--rate-limit-endpoint', 'GET /rest/v1/agents=1', '--rate-limit-endpoint', 'GET /rest/v1/agents=2'],
      '--rate-limit-endpoint names GET /rest/v1/agents twice',
    ],
    [['--rate-limit', '5', '--rate-limit-retry-after', 'never'], '--rate-limit-retry-after must be seconds, ms or none, not "never"'],
    [['--rate-limit', '5/10', '--rate-limit-window', '1000'], 'has no BURST with --rate-limit-window'],
    [['--rate-limit', '5', '--rate-limit-window', '0'], '--rate-limit-window must be an integer from 1 to 3600000, not "0"'],
    [['--verbose'], "Unknown option '--verbose'"],
    [['--port'], "Option '--port <value>' argument missing"],
    [['4010'], 'Unexpected argument'],
  ])('bad arguments %j: a usage error naming the problem, exit status 2', async (args, problem) => {
    const { result, out, err } = await runInProcess(args)
    expect(result).toEqual({ exitCode: 2 })
    expect(err).toContain(problem)
    expect(err).toContain('Usage: chat-service-fake [options]')
    expect(out).toBe('')
  })

  it('--version prints the version of the package (its package.json, read when run), exit status 0', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    const { result, out, err } = await runInProcess(['--version'])
    expect(result).toEqual({ exitCode: 0 })
    expect(out).toBe(`chat-service-fake ${version}\n`)
    expect(err).toBe('')
    // The bin as a user starts it, from source (the packed one: test/cli/fake-bin.test.ts).
    const run = start(['--version'])
    expect(await run.exit).toEqual({ code: 0, signal: null })
    expect(run.stdout()).toBe(`chat-service-fake ${version}\n`)
  })

  it('compresses only bodies worth it by default, and says so; --compression and --compression-min-bytes change it', async () => {
    /** One token (a few hundred bytes) and one page of 50 messages, accepting gzip and br: their content-encoding. */
    const codings = async (server: FakeServerHandle): Promise<[string | undefined, string | undefined]> => {
      const { baseUrl, keyId, keySecret } = server.clientOptions()
      const send = async (method: 'GET' | 'POST', path: string, extra: object): Promise<string | undefined> => {
        const res = await request(`${baseUrl}${path}`, {
          method,
          headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip, br' },
          body: JSON.stringify({ keyId, keySecret, ...extra }),
        })
        expect(res.statusCode).toBe(200)
        await res.body.dump()
        return res.headers['content-encoding'] as string | undefined
      }
      return [
        await send('POST', '/rest/v1/auth/token', { userId: 'ext_00001' }),
        await send('GET', '/rest/v1/conversations/conv_00001/messages', {}),
      ]
    }
    for (const [args, line, expected] of [
      [[], 'Compression: gzip or br for bodies of 1024 bytes or more, as accept-encoding asks', [undefined, 'br']],
      [['--compression', 'gzip'], 'Compression: gzip for bodies of 1024 bytes or more', [undefined, 'gzip']],
      [['--compression', 'br', '--compression-min-bytes', '0'], 'Compression: br for bodies of 0 bytes or more', ['br', 'br']],
      [['--compression', 'off'], 'Compression: off', [undefined, undefined]],
    ] as const) {
      const { result, out } = await runInProcess(['--port', '0', ...args])
      const server = serverOf(result)
      try {
        expect(out).toContain(line)
        expect(await codings(server), args.join(' ')).toEqual(expected)
      } finally {
        await server.close()
      }
    }
  })

  it('--help prints the usage, exit status 0', async () => {
    const { result, out } = await runInProcess(['--help'])
    expect(result).toEqual({ exitCode: 0 })
    expect(out).toMatch(/^Usage: chat-service-fake \[options\]/)
    expect(out).toContain('--latency MS')
    expect(out).toContain('--compression off|gzip|br')
    expect(out).toContain('bodies under N bytes go uncompressed (default 1024)')
    expect(out).toContain('--version')
  })

  it('a port in use: says so and how to choose another, exit status 1', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as { port: number }
    try {
      const { result, err } = await runInProcess(['--port', String(port)])
      expect(result).toEqual({ exitCode: 1 })
      expect(err).toBe(`chat-service-fake: cannot start: port ${port} on 127.0.0.1 is in use; pass --port N (0 picks a free port)\n`)
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  })
})

describe('chat-service-fake: stopping', () => {
  it.each(['SIGINT', 'SIGTERM', 'disconnect'] as const)('on %s, closes the server and lets the process end', async (event) => {
    const { result } = await runInProcess(['--port', '0'])
    const server = serverOf(result)
    const target = Object.assign(new EventEmitter(), { connected: true, disconnect: vi.fn(), exit: vi.fn() })
    let err = ''
    const stopped = stopOnSignals({ server, json: false }, target, { out: () => {}, err: (text) => (err += text) })
    target.emit(event)
    await stopped
    expect(err).toBe('chat-service-fake: stopped\n')
    expect(target.disconnect).toHaveBeenCalledOnce() // an open IPC channel would keep the process alive
    expect(target.exit).not.toHaveBeenCalled() // it ends on its own, with exit status 0
    await expect(request(server.url)).rejects.toMatchObject({ code: 'ECONNREFUSED' })
  })

  it('a second Ctrl-C while closing exits at once with status 1; without an IPC channel, no disconnect', async () => {
    const { result } = await runInProcess(['--port', '0', '--json'])
    const server = serverOf(result)
    const target = Object.assign(new EventEmitter(), { connected: false, exit: vi.fn() })
    const stopped = stopOnSignals({ server, json: true }, target, { out: () => {}, err: () => {} })
    expect(target.listenerCount('disconnect')).toBe(0)
    target.emit('SIGINT')
    target.emit('SIGINT')
    expect(target.exit).toHaveBeenCalledExactlyOnceWith(1)
    await stopped
  })
})

describe('chat-service-fake: the process', () => {
  it('stops on SIGINT (Ctrl-C): exit status 0, the port released', async () => {
    const run = start(['--port', '0'])
    const env = envLines(await waitFor(run, 'Press Ctrl-C to stop.'))
    const client = new ChatServiceClient({
      baseUrl: env['CHAT_SERVICE_BASE_URL']!,
      keyId: env['CHAT_SERVICE_KEY_ID']!,
      keySecret: env['CHAT_SERVICE_KEY_SECRET']!,
    })
    expect((await client.agents.list()).pagination.total).toBe(5)
    await client.close()

    run.child.kill('SIGINT')
    expect(await run.exit).toEqual({ code: 0, signal: null })
    expect(run.stderr()).toContain('chat-service-fake: stopped')
    await expect(request(env['CHAT_SERVICE_BASE_URL']!)).rejects.toMatchObject({ code: 'ECONNREFUSED' })
  })

  it('stops on SIGTERM: exit status 0; with --json, stdout holds the one line only', async () => {
    const run = start(['--json', '--port', '0'])
    const line = await waitFor(run, '\n')
    const client = new ChatServiceClient(JSON.parse(line) as { baseUrl: string; keyId: string; keySecret: string })
    expect((await client.agents.list()).pagination.total).toBe(5)
    await client.close()
    run.child.kill('SIGTERM')
    expect(await run.exit).toEqual({ code: 0, signal: null })
    expect(run.stdout()).toBe(line)
  })

  it('bad arguments: exit status 2', async () => {
    const run = start(['--port', 'x'])
    expect(await run.exit).toEqual({ code: 2, signal: null })
    expect(run.stderr()).toContain('--port must be an integer from 0 to 65535, not "x"')
  })
})
