/**
 * Log lines (issue 11): an invalid CHAT_SERVICE_LOG warns once per process, naming the valid
 * values (checked in a child process, because the "once" flag lives as long as the process), and
 * each retry is logged at `info` with the method and path exactly once in its message.
 */
import { spawn } from 'node:child_process'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, emptyListFor, updatedUser } from '../helpers/fixtures.ts'
import { recordingLogger, startLoopback, targetOf, type LoopbackServer } from '../helpers/loopback.ts'
import { sdkBundleUrl } from '../helpers/sdk-bundle.ts'

/**
 * Runs `body` (an ES module's text, with `sdk` bound to the SDK's root module: today's src/, bundled,
 * test/helpers/sdk-bundle.ts) in a child Node (this test's own) with `env` added.
 */
async function runChild(body: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('CHAT_SERVICE_') && name !== 'NODE_OPTIONS'),
  )
  const script = `const sdk = await import(${JSON.stringify(await sdkBundleUrl())});\n${body}`
  const child = spawn(process.execPath, ['--no-warnings', '--input-type=module', '-e', script], {
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, stdout, stderr }
}

/** Makes three clients, each with a logger that records; prints every call as JSON lines; logs one warn and one info through the last. */
const THREE_CLIENTS = `
const calls = []
const logger = (client) => Object.fromEntries(['debug', 'info', 'warn', 'error'].map((level) => [level, (message) => calls.push({ client, level, message })]))
const options = { baseUrl: 'http://127.0.0.1:9', keyId: 'k', keySecret: 'ks_live_Q9vX3mR7pL2wT8nB5cY1' }
const a = new sdk.ChatServiceClient({ ...options, logger: logger('a') })
const b = new sdk.ChatServiceClient({ ...options, logger: logger('b') })
const c = new sdk.ChatServiceClient({ ...options, logger: logger('c') })
c.withOptions({})
for (const client of [a, b, c]) await client.close()
console.log(JSON.stringify(calls))
`

interface ChildCall {
  client: string
  level: string
  message: string
}

describe('CHAT_SERVICE_LOG', () => {
  it('an invalid value (verbose) warns once per process, naming the value and the valid ones', async () => {
    const { code, stdout, stderr } = await runChild(THREE_CLIENTS, { CHAT_SERVICE_LOG: 'verbose' })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const calls = JSON.parse(stdout) as ChildCall[]
    expect(calls).toHaveLength(1)
    const [warning] = calls
    expect(warning?.client).toBe('a')
    expect(warning?.level).toBe('warn')
    expect(warning?.message).toContain('CHAT_SERVICE_LOG')
    expect(warning?.message).toContain('verbose')
    expect(warning?.message).toMatch(/off, error, warn, info, debug/)
  })

  it('a valid value, in any case, warns about nothing', async () => {
    for (const value of ['debug', 'INFO', 'off']) {
      const { code, stdout } = await runChild(THREE_CLIENTS, { CHAT_SERVICE_LOG: value })
      expect(code).toBe(0)
      expect(JSON.parse(stdout)).toEqual([])
    }
  })
})

describe('retry log lines', () => {
  let server: LoopbackServer
  beforeAll(async () => {
    server = await startLoopback()
  })
  afterAll(async () => {
    await server.close()
  })
  beforeEach(() => {
    server.clear()
  })

  /** How many times `needle` occurs in `text`. */
  function occurrences(text: string, needle: string): number {
    return text.split(needle).length - 1
  }

  it.each([
    ['a 503', 'status'],
    ['a dropped connection', 'network'],
  ] as const)('a retry after %s is logged at info with method and path exactly once in the message', async (_name, failure) => {
    let calls = 0
    server.respond((request) => {
      calls++
      if (calls % 2 === 1) return failure === 'status' ? { status: 503, headers: { 'retry-after-ms': '0' }, body: 'busy' } : 'destroy'
      return request.method === 'PUT' ? { body: updatedUser('cu-9') } : { body: emptyListFor(targetOf(request).pathname) }
    })
    const logger = recordingLogger()
    const client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logger, logLevel: 'info' })
    try {
      await client.agents.list({ limit: 3 })
      await client.customerUsers.update('cu-9', { name: 'n' })
      const lines = logger.messages('info')
      expect(lines).toHaveLength(2)
      const [listRetry, updateRetry] = lines as [string, string]
      expect(occurrences(listRetry, 'GET')).toBe(1)
      expect(occurrences(listRetry, '/rest/v1/agents')).toBe(1)
      expect(listRetry).toContain('GET /rest/v1/agents?limit=3&page=1')
      expect(occurrences(updateRetry, 'PUT')).toBe(1)
      expect(occurrences(updateRetry, '/rest/v1/customer-users/cu-9')).toBe(1)
      expect(listRetry).toMatch(/retrying in \d+ ms/)
      expect(logger.calls.filter((call) => call.level === 'info').map((call) => call.args[1])).toMatchObject([
        { method: 'GET', path: '/rest/v1/agents?limit=3&page=1', attempt: 1 },
        { method: 'PUT', path: '/rest/v1/customer-users/cu-9', attempt: 1 },
      ])
      expect(logger.messages('debug')).toEqual([])
    } finally {
      await client.close()
    }
  })
})
