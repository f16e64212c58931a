// examples/export-messages.ts as a user of the repository runs it (`npm run export-messages`): the
// package's `chat-service export` command run in-process, from source (no build), as a child
// process against the fake service. It must pass its options through and keep the command's
// promise: stopped by Ctrl-C mid-way and run again, the output equals a full export byte for byte.
// The command itself (SIGTERM, SIGKILL, --checkpoint across nights, shards) is tested from the
// packed tarball in test/cli/export.test.ts.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createFakeChatService, generateDataset, type FakeChatService, type FakeServerHandle } from 'chat-service-sdk/testing'
import { sdkBundleEnv } from '../helpers/sdk-bundle.ts'

const EXAMPLE = fileURLToPath(new URL('../../examples/export-messages.ts', import.meta.url))
const FROM_SOURCE = fileURLToPath(new URL('../helpers/sdk-from-source.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** The embedded fake's dataset (examples/connect.ts): 60 conversations, 10,000 messages. */
const DATASET = { seed: 42, agents: 5, customerUsers: 500, conversations: 60, messages: 10_000 }

interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
  stderr: string
}

interface Export {
  readonly child: ReturnType<typeof spawn>
  readonly exit: Promise<Exit>
}

const cleanup: (() => Promise<void>)[] = []
/** The run's bundle of the SDK for the children (test/helpers/sdk-bundle.ts). */
let bundle: Awaited<ReturnType<typeof sdkBundleEnv>> | undefined

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

async function serve(): Promise<{ fake: FakeChatService; server: FakeServerHandle }> {
  const fake = createFakeChatService({ seed: generateDataset(DATASET) })
  const server = await fake.listen()
  cleanup.push(() => server.close())
  return { fake, server }
}

async function workDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'export-messages-'))
  cleanup.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** Starts the example with `args` (the output file, then options), against `server` (through the environment, as against a real service). */
function startExport(server: FakeServerHandle, args: readonly string[]): Export {
  const { baseUrl, keyId, keySecret } = server.clientOptions()
  const child = spawn(process.execPath, ['--no-warnings', '--import', FROM_SOURCE, EXAMPLE, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...bundle, CHAT_SERVICE_BASE_URL: baseUrl, CHAT_SERVICE_KEY_ID: keyId, CHAT_SERVICE_KEY_SECRET: keySecret },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exit = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
    stderr,
  }))
  cleanup.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await exit
    }
  })
  return { child, exit }
}

async function exportToEnd(server: FakeServerHandle, args: readonly string[]): Promise<Exit> {
  const exit = await startExport(server, args).exit
  expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null })
  return exit
}

const sizeOf = (path: string): Promise<number> =>
  stat(path).then(
    (s) => s.size,
    () => 0,
  )
const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  )

/** The cursor file's content, if it exists (it is replaced by a rename, so it is never half written). */
async function checkpointIn(path: string): Promise<{ done: number; bytes: number } | undefined> {
  return readFile(path, 'utf8').then(
    (text) => JSON.parse(text) as { done: number; bytes: number },
    () => undefined,
  )
}

/** Resolves once `check` holds (every 5 ms); rejects after `ms` ms. */
async function poll(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error('Condition not met in time')
    await sleep(5)
  }
}

/** The path of the messages of the conversation at `index` in list order. */
function messagesPath(fake: FakeChatService, index: number): string {
  const [company] = fake.companyIds()
  const conversation = fake.listConversations(company as string)[index]
  if (conversation === undefined) throw new Error(`no conversation ${index}`)
  return `/rest/v1/conversations/${conversation.id}/messages`
}

/** A full export of the dataset made in one run (the same seed gives the same data on any fake). */
let reference: string

beforeAll(async () => {
  bundle = await sdkBundleEnv()
  const fake = createFakeChatService({ seed: generateDataset(DATASET) })
  const server = await fake.listen()
  const dir = await mkdtemp(join(tmpdir(), 'export-messages-reference-'))
  try {
    await exportToEnd(server, [join(dir, 'reference.jsonl')])
    reference = await readFile(join(dir, 'reference.jsonl'), 'utf8')
  } finally {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
}, 60_000)

/** Checks the output of a stopped and resumed export against the full export made in one run. */
async function expectFullExport(resumed: string): Promise<void> {
  const got = await readFile(resumed, 'utf8')
  const lines = got.split('\n').slice(0, -1)
  expect(lines).toHaveLength(DATASET.messages)
  expect(new Set(lines.map((line) => (JSON.parse(line) as { id: string }).id)).size).toBe(DATASET.messages)
  expect(got === reference).toBe(true) // same lines, same order (compared whole: a diff of 10,000 lines helps nobody)
}

describe('export-messages: the chat-service export command', () => {
  it('stopped by SIGINT mid-way (exit 130), run again: appends the rest', { timeout: 60_000 }, async () => {
    const { fake, server } = await serve()
    const dir = await workDir()
    const output = join(dir, 'messages.jsonl')
    const cursorFile = `${output}.cursor`

    // The 31st conversation's first page is held back, so the signal surely comes mid-way.
    const held = messagesPath(fake, 30)
    fake.failNext(1, { delayMs: 60_000, match: { method: 'GET', path: held } })
    const first = startExport(server, [output])
    await poll(async () => fake.requests.some((request) => request.path === held) && (await sizeOf(output)) > 0)
    first.child.kill('SIGINT')
    const stopped = await first.exit
    expect(stopped, stopped.stderr).toMatchObject({ code: 130, signal: null })
    expect(stopped.stderr).toContain('stopped by SIGINT')
    const partial = (await readFile(output, 'utf8')).split('\n').slice(0, -1)
    expect(partial.length).toBeGreaterThan(0)
    expect(partial.length).toBeLessThan(DATASET.messages)
    expect(await checkpointIn(cursorFile)).toMatchObject({ done: partial.length, bytes: await sizeOf(output) })

    const second = await exportToEnd(server, [output])
    expect(second.stderr).toContain(`resuming after message ${partial.length}`)
    expect(await exists(cursorFile)).toBe(false) // finished: the next run starts a new export
    await expectFullExport(output)
  })

  it('passes the options after the output file to the command: --checkpoint makes it the nightly job', { timeout: 60_000 }, async () => {
    const { server } = await serve()
    const dir = await workDir()
    const output = join(dir, 'night.jsonl')
    const checkpoint = join(dir, 'messages.checkpoint.json')
    const ran = await exportToEnd(server, [output, '--checkpoint', checkpoint])
    expect(ran.stderr).toContain(`checkpoint saved in ${checkpoint}`)
    expect(JSON.parse(await readFile(checkpoint, 'utf8'))).toMatchObject({ version: 1, run: null })
    await expectFullExport(output)
  })
})
