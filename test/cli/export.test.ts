// `chat-service export` as a user runs it (the bin of the packed tarball, a child process, the fake
// in listen mode): a full export and a nightly one (--checkpoint) across runs with data appended
// between them, shards whose files together are one export, and stops of every kind (SIGINT,
// SIGTERM, SIGKILL, --max-items) followed by a run of the same command: the files must then hold
// exactly the lines of an export made in one go, none twice, none missing.
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { shardOf } from 'chat-service-sdk'
import {
  createFakeChatService,
  generateDataset,
  type FakeChatService,
  type FakeServerHandle,
  type MessageRecord,
} from 'chat-service-sdk/testing'
import {
  expectNoSecret,
  installPacked,
  poll,
  runCli,
  runOnTerminal,
  serviceEnv,
  startCli,
  type Installed,
  type Ran,
  type Running,
} from './helpers.ts'

const DATASET = { seed: 42, agents: 3, customerUsers: 40, conversations: 60, messages: 3_000 }

let installed: Installed
let work = 0

beforeAll(async () => {
  installed = await installPacked()
}, 120_000)

afterAll(() => {
  installed.remove()
})

interface Service {
  readonly fake: FakeChatService
  readonly server: FakeServerHandle
  readonly env: Record<string, string>
  readonly company: string
}

const cleanup: (() => Promise<void>)[] = []

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

async function serve(): Promise<Service> {
  const fake = createFakeChatService({ seed: generateDataset(DATASET) })
  const server = await fake.listen()
  cleanup.push(() => server.close())
  return { fake, server, env: serviceEnv(server), company: fake.companyIds()[0] ?? '' }
}

/** A fresh file name in the project directory. */
function file(name: string): string {
  return join(installed.dir, `${++work}-${name}`)
}

/** Starts `chat-service export args...`; killed at the end of the test if still running. */
function start(service: Service, args: readonly string[]): Running {
  const running = startCli(installed, ['export', ...args], { env: service.env })
  cleanup.push(async () => {
    if (running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL')
      await running.exit
    }
  })
  return running
}

/** Runs `chat-service export args...` to its end, expecting exit 0; no secret in its output. */
async function exportToEnd(service: Service, args: readonly string[]): Promise<Ran> {
  const ran = await runCli(installed, ['export', ...args], { env: service.env })
  expect(ran, ran.stderr).toMatchObject({ code: 0, signal: null, stdout: '' })
  expectNoSecret(ran, [service.env['CHAT_SERVICE_KEY_SECRET'] ?? ''])
  return ran
}

/** Every message of the company as the export writes it: conversations in list order, each one's messages oldest first. */
function lines(service: Service, conversations = service.fake.listConversations(service.company)): string {
  return conversations
    .flatMap((conversation) => service.fake.listMessages(service.company, conversation.id))
    .map((message) => `${JSON.stringify(message)}\n`)
    .join('')
}

/** The path of the messages of the conversation at `index` in list order. */
function messagesPath(service: Service, index: number): string {
  const conversation = service.fake.listConversations(service.company)[index]
  if (conversation === undefined) throw new Error(`no conversation ${index}`)
  return `/rest/v1/conversations/${conversation.id}/messages`
}

/** Holds the first page of the conversation at `index` for a minute, so that a run surely stops before it. */
function hold(service: Service, index: number): string {
  const path = messagesPath(service, index)
  service.fake.failNext(1, { delayMs: 60_000, match: { method: 'GET', path } })
  return path
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
const readJson = async (path: string): Promise<Record<string, unknown> | undefined> =>
  readFile(path, 'utf8').then(
    (text) => JSON.parse(text) as Record<string, unknown>,
    () => undefined,
  )

/** Compares whole files (a diff of thousands of lines helps nobody), with a useful message. */
async function expectContent(path: string, expected: string): Promise<void> {
  const got = await readFile(path, 'utf8')
  const count = (text: string): number => text.split('\n').length - 1
  expect(got === expected, `${path}: ${count(got)} lines, expected ${count(expected)}`).toBe(true)
}

describe('export without --checkpoint: every message', { timeout: 60_000 }, () => {
  it('writes every message as JSON Lines in nested-loop order, stdout empty, and removes its cursor file when done', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    const ran = await exportToEnd(service, ['--out', out])
    await expectContent(out, lines(service))
    expect(await exists(`${out}.cursor`)).toBe(false)
    expect(await exists(`${out}.cursor.lock`)).toBe(false)
    expect(ran.stderr).toContain(`exported ${DATASET.messages} messages of ${DATASET.messages} expected to ${out}`)
  })

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('stopped by %s mid-way (exit %i), the same command again appends the rest: one full export', async (signal, status) => {
    const service = await serve()
    const out = file('messages.jsonl')
    const held = hold(service, 30)
    const first = start(service, ['--out', out])
    await poll(async () => service.fake.requests.some((request) => request.path === held) && (await sizeOf(out)) > 0)
    if (signal === 'SIGINT') {
      // Not a terminal: a plain progress line every 5 s, with the rate and the time left.
      await poll(() => /exported \d+ of \d+ messages \(\d+\.\d%\), [\d,]+ messages\/s, ETA \S+\n/.test(first.stderr()))
    }
    first.child.kill(signal)
    const stopped = await first.exit
    expect(stopped, stopped.stderr).toMatchObject({ code: status, signal: null, stdout: '' })
    expect(stopped.stderr).toContain(`stopped by ${signal} after`)
    const partial = (await readFile(out, 'utf8')).split('\n').length - 1
    expect(partial).toBeGreaterThan(0)
    expect(partial).toBeLessThan(DATASET.messages)
    expect(await readJson(`${out}.cursor`)).toMatchObject({ version: 1, done: partial, bytes: await sizeOf(out) })

    const second = await exportToEnd(service, ['--out', out])
    expect(second.stderr).toContain(`resuming after message ${partial}`)
    await expectContent(out, lines(service))
    expect(await exists(`${out}.cursor`)).toBe(false)
  })

  it('data added between a stop and the resume: the resumed export has what lies past where it stopped, each line once', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    const conversations = service.fake.listConversations(service.company)
    hold(service, 30)
    const first = start(service, ['--out', out])
    // Stopped once conversations 0 to 29 are written (30 is held): what is added before that point is not part of this export.
    const written = lines(service, conversations.slice(0, 30))
    await poll(async () => (await sizeOf(out)) === Buffer.byteLength(written))
    first.child.kill('SIGINT')
    expect((await first.exit).code).toBe(130)
    service.fake.clearFaults()
    expect(await readFile(out, 'utf8')).toBe(written)
    aDayPasses(service, 2) // messages in conversations 3 and 41, and a new conversation at the end of the list

    await exportToEnd(service, ['--out', out])
    await expectContent(out, written + lines(service, service.fake.listConversations(service.company).slice(30)))
  })

  it('killed (SIGKILL) after lines past the saved point were written: the next run cuts them and resumes exactly', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    // Conversation 20 comes 1.5 s late, so the state is surely saved (about every second) on its
    // first message, and more lines follow before conversation 57, held until the kill.
    service.fake.failNext(1, { delayMs: 1_500, match: { method: 'GET', path: messagesPath(service, 20) } })
    hold(service, 57)
    const first = start(service, ['--out', out])
    await poll(async () => {
      const saved = await readJson(`${out}.cursor`)
      return saved !== undefined && (await sizeOf(out)) > (saved['bytes'] as number)
    })
    first.child.kill('SIGKILL')
    expect((await first.exit).signal).toBe('SIGKILL')
    service.fake.clearFaults()
    const saved = (await readJson(`${out}.cursor`)) as { done: number; bytes: number }
    expect(await sizeOf(out)).toBeGreaterThan(saved.bytes)

    const second = await exportToEnd(service, ['--out', out]) // the killed run's lock is taken over: its process is gone
    expect(second.stderr).toContain(`resuming after message ${saved.done}`)
    expect(second.stderr).toContain(`cutting ${out} back`)
    await expectContent(out, lines(service))
  })

  it('--max-items N stops after N messages (exit 0, resumable); the next run goes on', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    const first = await exportToEnd(service, ['--out', out, '--max-items', '250'])
    expect(first.stderr).toContain('stopped after 250 messages (--max-items)')
    expect((await readFile(out, 'utf8')).split('\n').length - 1).toBe(250)
    await exportToEnd(service, ['--out', out])
    await expectContent(out, lines(service))
  })

  it('a second export on the same files while one runs: exit 1, naming the one that runs', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    const held = hold(service, 10)
    const first = start(service, ['--out', out])
    await poll(() => service.fake.requests.some((request) => request.path === held))
    const second = await runCli(installed, ['export', '--out', out], { env: service.env })
    expect(second).toMatchObject({ code: 1, stdout: '' })
    expect(second.stderr).toMatch(new RegExp(`^chat-service: another export is running on these files \\(pid ${first.child.pid} on `))
    first.child.kill('SIGINT')
    expect((await first.exit).code).toBe(130)
  })

  it('on a terminal: a progress bar with the rate and the time left', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    const { code, screen } = await runOnTerminal(installed, ['export', '--out', out], { env: service.env })
    expect(code).toBe(0)
    expect(screen).toMatch(new RegExp(`messages [=-]+ 100\\.0% \\| ${DATASET.messages}/${DATASET.messages} \\| [\\d,]+/s \\| ETA \\S+`))
    await expectContent(out, lines(service))
    expectNoSecret({ screen }, [service.env['CHAT_SERVICE_KEY_SECRET'] ?? ''])
  })
})

/** Adds to the company what a day adds: messages in two conversations, and a new conversation with messages. */
function aDayPasses(service: Service, day: number): MessageRecord[] {
  const { fake, company } = service
  const conversations = fake.listConversations(company)
  const added = [
    ...fake.appendMessages(company, conversations[3]?.id ?? '', 3),
    ...fake.appendMessages(company, conversations[41]?.id ?? '', [{ role: 'user', content: `day ${day}: is my order here?` }]),
  ]
  const customer = fake.listCustomerUsers(company)[0]
  const id = `conv_day_${day}`
  const at = new Date(Date.UTC(2030, 0, day)).toISOString()
  fake.seed({
    companies: [
      {
        id: company,
        keys: [],
        conversations: [
          { id, title: `Day ${day}`, customer_user_id: customer?.id ?? '', message_count: 0, created_at: at, updated_at: at },
        ],
      },
    ],
  })
  added.push(...fake.appendMessages(company, id, 2))
  return added
}

/** Lines of `messages` in the order the nightly export writes them (conversations in list order). */
function linesOf(service: Service, messages: readonly MessageRecord[]): string {
  const order = service.fake.listConversations(service.company).map((conversation) => conversation.id)
  return [...messages]
    .sort((a, b) => order.indexOf(a.conversation_id) - order.indexOf(b.conversation_id))
    .map((message) => `${JSON.stringify(message)}\n`)
    .join('')
}

describe('export --checkpoint: the nightly job', { timeout: 60_000 }, () => {
  it('night 1 writes every message; night 2 appends only what was added (a new conversation, two grown); night 3 nothing', async () => {
    const service = await serve()
    const checkpoint = file('messages.checkpoint.json')
    const night1 = file('night-1.jsonl')
    const first = await exportToEnd(service, ['--out', night1, '--checkpoint', checkpoint])
    await expectContent(night1, lines(service))
    expect(first.stderr).toContain(`conversations: ${DATASET.conversations} new, 0 grown, 0 unchanged, 0 rewound, 0 deleted`)
    expect(await readJson(checkpoint)).toMatchObject({ version: 1, shard: null, run: null, checkpoint: { version: 2 } })

    const added = aDayPasses(service, 2)
    const night2 = file('night-2.jsonl')
    const second = await exportToEnd(service, ['--out', night2, '--checkpoint', checkpoint])
    await expectContent(night2, linesOf(service, added))
    expect(second.stderr).toContain(`exported ${added.length} new messages to ${night2}`)
    expect(second.stderr).toContain(`conversations: 1 new, 2 grown, ${DATASET.conversations - 2} unchanged, 0 rewound, 0 deleted`)

    const night3 = file('night-3.jsonl')
    await exportToEnd(service, ['--out', night3, '--checkpoint', checkpoint])
    await expectContent(night3, '')
    // Nights 1 and 2 together are one export of everything, each message once.
    expect((await readFile(night1, 'utf8')) + (await readFile(night2, 'utf8'))).toHaveLength(lines(service).length)
  })

  it('one growing file: every night appends to the same --out', async () => {
    const service = await serve()
    const checkpoint = file('messages.checkpoint.json')
    const out = file('messages.jsonl')
    await exportToEnd(service, ['--out', out, '--checkpoint', checkpoint])
    const before = lines(service)
    const added = aDayPasses(service, 2)
    await exportToEnd(service, ['--out', out, '--checkpoint', checkpoint])
    await expectContent(out, before + linesOf(service, added))
  })

  it('Ctrl-C in the middle of a night, then the same command: that night has every new message once', async () => {
    const service = await serve()
    const checkpoint = file('messages.checkpoint.json')
    await exportToEnd(service, ['--out', file('night-1.jsonl'), '--checkpoint', checkpoint])
    // Night 2: every conversation grows, so that it stops halfway through them.
    const added = service.fake
      .listConversations(service.company)
      .flatMap((conversation) => service.fake.appendMessages(service.company, conversation.id, 2))
    const night2 = file('night-2.jsonl')
    const held = hold(service, 30)
    const sent = service.fake.requests.length
    const first = start(service, ['--out', night2, '--checkpoint', checkpoint])
    await poll(async () => service.fake.requests.slice(sent).some((request) => request.path === held) && (await sizeOf(night2)) > 0)
    first.child.kill('SIGINT')
    const stopped = await first.exit
    expect(stopped, stopped.stderr).toMatchObject({ code: 130, stdout: '' })
    const state = (await readJson(checkpoint)) as { run: { out: string; bytes: number; written: number } }
    expect(state.run).toEqual({ out: night2, bytes: await sizeOf(night2), written: expect.any(Number) as number })
    expect(state.run.written).toBeGreaterThan(0)
    expect(state.run.written).toBeLessThan(added.length)

    const second = await exportToEnd(service, ['--out', night2, '--checkpoint', checkpoint])
    expect(second.stderr).toContain(`resuming an unfinished run after its ${state.run.written} messages`)
    await expectContent(night2, linesOf(service, added))
  })

  it('killed (SIGKILL) in its first night, early (no periodic save yet, most likely): the next run cuts the output back and finishes it exactly', async () => {
    const service = await serve()
    const checkpoint = file('messages.checkpoint.json')
    const out = file('night-1.jsonl')
    // The checkpoint file names the run and its starting length before the first line is written.
    hold(service, 5)
    const first = start(service, ['--out', out, '--checkpoint', checkpoint])
    await poll(async () => {
      const saved = (await readJson(checkpoint)) as { run?: { bytes: number } } | undefined
      return saved?.run !== undefined && (await sizeOf(out)) > saved.run.bytes
    })
    first.child.kill('SIGKILL')
    await first.exit
    service.fake.clearFaults()
    await exportToEnd(service, ['--out', out, '--checkpoint', checkpoint])
    await expectContent(out, lines(service))
  })
})

describe('export --shard I/N: one export over N workers', { timeout: 90_000 }, () => {
  it("shards' files together hold every message once, each shard its own conversations; so do their nightly files", async () => {
    const service = await serve()
    const count = 3
    const outs = Array.from({ length: count }, (_, index) => file(`shard-${index}.jsonl`))
    const checkpoints = Array.from({ length: count }, (_, index) => file(`shard-${index}.checkpoint.json`))
    await Promise.all(
      outs.map((out, index) =>
        exportToEnd(service, ['--out', out, '--shard', `${index}/${count}`, '--checkpoint', checkpoints[index] ?? '']),
      ),
    )
    const all = lines(service)
    for (const [index, out] of outs.entries()) {
      const mine = service.fake.listConversations(service.company).filter((conversation) => shardOf(conversation.id, count) === index)
      expect(mine.length).toBeGreaterThan(0)
      await expectContent(out, lines(service, mine)) // its own conversations, in list order, nothing else
    }
    const together = await Promise.all(outs.map((out) => readFile(out, 'utf8')))
    expect(together.join('').split('\n').sort()).toEqual(all.split('\n').sort())

    const added = aDayPasses(service, 2)
    const nights = outs.map((out) => out.replace('.jsonl', '.night-2.jsonl'))
    await Promise.all(
      nights.map((out, index) =>
        exportToEnd(service, ['--out', out, '--shard', `${index}/${count}`, '--checkpoint', checkpoints[index] ?? '']),
      ),
    )
    const night = await Promise.all(nights.map((out) => readFile(out, 'utf8')))
    expect(night.join('').split('\n').sort()).toEqual(linesOf(service, added).split('\n').sort())
  })

  it('a state file of another shard is refused, saying how to go on', async () => {
    const service = await serve()
    const out = file('shard.jsonl')
    await exportToEnd(service, ['--out', out, '--shard', '1/3', '--max-items', '10'])
    const ran = await runCli(installed, ['export', '--out', out], { env: service.env })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`${out}.cursor is an unfinished export of shard 1/3, not all shards: finish it with --shard 1/3`)
    const checkpoint = file('shard.checkpoint.json')
    await exportToEnd(service, ['--out', file('n.jsonl'), '--checkpoint', checkpoint, '--shard', '0/2'])
    const other = await runCli(installed, ['export', '--out', file('n.jsonl'), '--checkpoint', checkpoint, '--shard', '1/2'], {
      env: service.env,
    })
    expect(other.code).toBe(1)
    expect(other.stderr).toContain(`holds the checkpoint of shard 0/2, and this run is shard 1/2`)
  })

  it.each([['2/2'], ['1/0'], ['x'], ['1/70000']])('--shard %s: exit 2, nothing sent', async (shard) => {
    const service = await serve()
    const ran = await runCli(installed, ['export', '--out', file('x.jsonl'), '--shard', shard], { env: service.env })
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain('--shard must be I/N')
    expect(service.fake.requests).toHaveLength(0)
  })
})

describe('export: files it did not write', () => {
  it('a cursor file that is not one: exit 1 before anything is written or sent', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    await writeFile(`${out}.cursor`, 'not json')
    const ran = await runCli(installed, ['export', '--out', out], { env: service.env })
    expect(ran).toMatchObject({
      code: 1,
      stderr: `chat-service: ${out}.cursor is not a cursor file of chat-service export; delete it to start a new export\n`,
    })
    expect(service.fake.requests).toHaveLength(0)
    expect(await exists(out)).toBe(false)
  })
})
