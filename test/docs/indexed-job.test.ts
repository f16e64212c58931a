// The Kubernetes Indexed Job worker of docs/nightly.md ("One night over many workers"), as written:
// the ts block after "### A Kubernetes Indexed Job" is saved as worker.ts and run as each pod of the
// Job would run it, a child process per index with JOB_COMPLETION_INDEX, SHARD_COUNT and OUT_DIR set,
// against the fake service. (snippets.test.ts only type-checks it: it needs those variables.) Four
// pods export every message once; a pod killed with SIGKILL mid-way and started again goes on from
// its state file; the next run writes only the messages added since.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { shardOf } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type FakeServerHandle } from 'chat-service-sdk/testing'
import { sdkBundleEnv } from '../helpers/sdk-bundle.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const FROM_SOURCE = fileURLToPath(new URL('../helpers/sdk-from-source.ts', import.meta.url))
const PODS = 4

/** The first ts block after `heading` in docs/nightly.md. */
async function snippetAfter(heading: string): Promise<string> {
  const readme = await readFile(join(ROOT, 'docs/nightly.md'), 'utf8')
  const at = readme.indexOf(heading)
  expect(at, `docs/nightly.md has "${heading}"`).toBeGreaterThan(0)
  const start = readme.indexOf('```ts\n', at) + '```ts\n'.length
  return readme.slice(start, readme.indexOf('\n```\n', start))
}

const fake = createFakeChatService({ seed: generateDataset({ seed: 23, conversations: 400, messages: 8_000 }), latencyMs: 120 })
let server: FakeServerHandle
let dir: string
let worker: string
/** The run's bundle of the SDK for the pods (test/helpers/sdk-bundle.ts). */
let bundle: Awaited<ReturnType<typeof sdkBundleEnv>>

beforeAll(async () => {
  server = await fake.listen()
  bundle = await sdkBundleEnv()
  dir = await mkdtemp(join(tmpdir(), 'indexed-job-'))
  worker = join(dir, 'worker.ts')
  await writeFile(worker, await snippetAfter('\n### A Kubernetes Indexed Job\n'))
})

afterAll(async () => {
  await server.close()
  await rm(dir, { recursive: true, force: true })
})

/** Starts the pod of `index`; resolves with its exit and output. */
function pod(index: number): { kill: () => void; exit: Promise<{ code: number | null; output: string }> } {
  const { baseUrl, keyId, keySecret } = server.clientOptions()
  const child = spawn(process.execPath, ['--no-warnings', '--import', FROM_SOURCE, worker], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...bundle,
      JOB_COMPLETION_INDEX: String(index),
      SHARD_COUNT: String(PODS),
      OUT_DIR: join(dir, 'data'),
      CHAT_SERVICE_BASE_URL: baseUrl,
      CHAT_SERVICE_KEY_ID: keyId,
      CHAT_SERVICE_KEY_SECRET: keySecret,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const exit = once(child, 'exit').then(([code]) => ({ code: code as number | null, output }))
  return { kill: () => child.kill('SIGKILL'), exit }
}

async function ids(): Promise<string[]> {
  const data = join(dir, 'data')
  const files = (await readdir(data)).filter((file) => file.endsWith('.jsonl'))
  const texts = await Promise.all(files.map((file) => readFile(join(data, file), 'utf8')))
  return texts.flatMap((text) => text.split('\n').slice(0, -1)).map((line) => (JSON.parse(line) as { id: string }).id)
}

it(
  'runs as each pod of the Indexed Job: every message once, a killed pod resumes, the next run only the new',
  { timeout: 120_000 },
  async () => {
    await mkdir(join(dir, 'data'))
    // Pod 0 is killed once its state file holds a checkpoint (the worker saves every second: 120 ms a
    // request makes the 90 % of its shard before the held page last longer than that), while a page
    // of its shard is held back (the killed pod's request only).
    const company = fake.companyIds()[0]!
    const mine = fake.listConversations(company).filter((conversation) => shardOf(conversation.id, PODS) === 0)
    const held = `/rest/v1/conversations/${mine[Math.floor(mine.length * 0.9)]!.id}/messages`
    fake.failNext(1, { delayMs: 30_000, match: { method: 'GET', path: held } })
    const first = pod(0)
    const stateFile = join(dir, 'data', `shard-0-of-${PODS}.json`)
    type State = { checkpoint?: unknown; run?: { bytes: number } }
    const state = (): Promise<State | undefined> =>
      readFile(stateFile, 'utf8').then(
        (text) => JSON.parse(text) as State,
        () => undefined,
      )
    const deadline = performance.now() + 30_000
    while (!((await state())?.checkpoint !== undefined && fake.requests.some((request) => request.path === held))) {
      if (performance.now() > deadline) throw new Error('pod 0 saved no checkpoint before the held page')
      await sleep(10)
    }
    first.kill()
    await first.exit
    const atKill = await state()
    expect(atKill?.run?.bytes).toBeGreaterThan(0) // killed mid-run, with lines saved: the next start cuts back and goes on
    const runs = await Promise.all(Array.from({ length: PODS }, (_, index) => pod(index).exit))
    for (const run of runs) expect(run, run.output).toMatchObject({ code: 0 })

    const night1 = await ids()
    const total = fake.listConversations(company).reduce((sum, conversation) => sum + conversation.message_count, 0)
    expect(night1).toHaveLength(total) // none twice...
    expect(new Set(night1).size).toBe(total) // ...and none lost

    // The next run: only the messages added since.
    const added = fake
      .listConversations(company)
      .filter((_, index) => index % 10 === 0)
      .flatMap((conversation) => fake.appendMessages(company, conversation.id, 2).map((message) => message.id))
    const next = await Promise.all(Array.from({ length: PODS }, (_, index) => pod(index).exit))
    for (const run of next) expect(run, run.output).toMatchObject({ code: 0 })
    expect(next.map((run) => Number(/: (\d+) new messages/.exec(run.output)?.[1])).reduce((a, b) => a + b, 0)).toBe(added.length)
    const both = await ids()
    expect(both).toHaveLength(total + added.length)
    expect(new Set(both)).toEqual(new Set([...night1, ...added]))
  },
)
