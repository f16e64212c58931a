// `chat-service-fake`, the package's command, as a user runs it: a child process (from source;
// the packed bin is the same file built), read from its output, stopped with a signal.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import { generateDataset } from 'chat-service-sdk/testing'

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

describe('npx chat-service-fake', () => {
  it('serves a generated dataset on loopback, prints what the SDK needs, and stops on SIGINT', async () => {
    const run = start(['--port', '0', '--seed', '7'])
    const env = envLines(await waitFor(run, 'Press Ctrl-C to stop.'))
    const key = generateDataset({ seed: 7 }).companies[0]!.keys[0]!
    expect(env).toEqual({
      CHAT_SERVICE_BASE_URL: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) as unknown,
      CHAT_SERVICE_KEY_ID: key.keyId,
      CHAT_SERVICE_KEY_SECRET: key.keySecret,
    })
    expect(run.stdout()).toContain(`keySecret  ${key.keySecret}`)

    const client = new ChatServiceClient({
      baseUrl: env['CHAT_SERVICE_BASE_URL']!,
      keyId: env['CHAT_SERVICE_KEY_ID']!,
      keySecret: env['CHAT_SERVICE_KEY_SECRET']!,
    })
    expect((await client.agents.list()).pagination.total).toBe(5)
    const found = await client.customerUsers.list({ external_id: 'ext_00042' })
    expect(found.data.map((user) => user.external_id)).toEqual(['ext_00042'])
    await client.close()

    run.child.kill('SIGINT')
    expect(await run.exit).toEqual({ code: 0, signal: null })
    expect(run.stderr()).toContain('chat-service-fake: stopped')
    await expect(request(env['CHAT_SERVICE_BASE_URL']!)).rejects.toMatchObject({ code: 'ECONNREFUSED' })
  })

  it('--json prints one line of client options, and SIGTERM stops it cleanly', async () => {
    const run = start([
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
    ])
    const line = await waitFor(run, '\n')
    const options = JSON.parse(line) as { baseUrl: string; keyId: string; keySecret: string }
    expect(Object.keys(options)).toEqual(['baseUrl', 'keyId', 'keySecret'])
    const client = new ChatServiceClient(options)
    expect((await client.agents.list()).pagination.total).toBe(2)
    await client.close()
    run.child.kill('SIGTERM')
    expect(await run.exit).toEqual({ code: 0, signal: null })
    expect(run.stdout()).toBe(line) // nothing else on stdout
  })

  it.each([
    [['--port', '70000'], '--port must be an integer from 0 to 65535, not "70000"'],
    [['--seed', '1.5'], '--seed must be an integer, not "1.5"'],
    [['--latency=-1'], '--latency must be a number of ms >= 0, not "-1"'],
    [['--messages', 'many'], '--messages must be an integer >= 0, not "many"'],
    [['--customer-users', '0'], 'conversations need at least one customer user'],
    [['--verbose'], "Unknown option '--verbose'"],
    [['--port'], "Option '--port <value>' argument missing"],
    [['4010'], 'Unexpected argument'],
  ])('bad arguments %j: a usage error naming the problem, exit status 2', async (args, problem) => {
    const run = start(args)
    expect(await run.exit).toEqual({ code: 2, signal: null })
    expect(run.stderr()).toContain(problem)
    expect(run.stderr()).toContain('Usage: chat-service-fake [options]')
    expect(run.stdout()).toBe('')
  })

  it('--help prints the usage and exits 0', async () => {
    const run = start(['--help'])
    expect(await run.exit).toEqual({ code: 0, signal: null })
    expect(run.stdout()).toMatch(/^Usage: chat-service-fake \[options\]/)
    expect(run.stdout()).toContain('--latency MS')
  })

  it('a port in use: says so and how to choose another, exit status 1', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as { port: number }
    try {
      const run = start(['--port', String(port)])
      expect(await run.exit).toEqual({ code: 1, signal: null })
      expect(run.stderr()).toContain(`cannot start: port ${port} on 127.0.0.1 is in use; pass --port N (0 picks a free port)`)
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  })
})
