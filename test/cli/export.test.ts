// `chat-service export` as a user runs it (the fake in listen mode; the runs that are stopped, and
// those that show an exit status, as child processes of the bin of the packed tarball; the runs to
// the end after them through `main`, the entry the bin uses, in this process: export-kit.ts): a full export across runs with data appended between them, and stops of every
// kind (SIGINT, SIGTERM, SIGKILL, --max-items) followed by a run of the same command: the files must
// then hold exactly the lines of an export made in one go, none twice, none missing. The nightly
// export (--checkpoint) is export-nightly.test.ts; shards, export-shards.test.ts (three files, so
// that vitest runs them side by side: each is mostly waiting on child processes).
import { readFile, writeFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { expectNoSecret, poll, runCli, runOnTerminal } from './helpers.ts'
import { aDayPasses, DATASET, exists, expectContent, hold, lines, messagesPath, readJson, sizeOf, useExportKit } from './export-kit.ts'

const kit = useExportKit()
const { serve, file, start, exportToEnd } = kit

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
    const second = await runCli(kit.installed(), ['export', '--out', out], { env: service.env })
    expect(second).toMatchObject({ code: 1, stdout: '' })
    expect(second.stderr).toMatch(new RegExp(`^chat-service: another export is running on these files \\(pid ${first.child.pid} on `))
    first.child.kill('SIGINT')
    expect((await first.exit).code).toBe(130)
  })

  it.each([
    ['another --checkpoint run with its own checkpoint file', (out: string) => ['--out', out, '--checkpoint', `${out}.b.json`]],
    ['a full export', (out: string) => ['--out', out]],
  ] as const)('while a --checkpoint run writes to a file, %s into it: exit 1, naming the one that runs', async (_other, args) => {
    const service = await serve()
    const out = file('messages.jsonl')
    const held = hold(service, 10)
    const first = start(service, ['--out', out, '--checkpoint', `${out}.a.json`])
    await poll(() => service.fake.requests.some((request) => request.path === held))
    const second = await runCli(kit.installed(), ['export', ...args(out)], { env: service.env })
    expect(second).toMatchObject({ code: 1, stdout: '' })
    expect(second.stderr).toMatch(new RegExp(`^chat-service: another export is running on these files \\(pid ${first.child.pid} on `))
    first.child.kill('SIGINT')
    expect((await first.exit).code).toBe(130)
  })

  it("under the service's rate limit: every message once, and the bar and the last line say the pace the 429s set", async () => {
    const service = await serve({ rateLimit: { requestsPerSecond: 30, burst: 5, retryAfter: 'none' } })
    const out = file('messages.jsonl')
    const { code, screen } = await runOnTerminal(kit.installed(), ['export', '--out', out], { env: service.env })
    expect(code).toBe(0)
    await expectContent(out, lines(service))
    expect(service.fake.requests.some((request) => request.status === 429)).toBe(true)
    expect(screen).toMatch(/ETA \S+ \| paced at [\d.]+ requests\/s/)
    expect(screen).toMatch(
      new RegExp(
        `exported ${DATASET.messages} messages of ${DATASET.messages} expected to \\S+; paced at [\\d.]+ requests/s by the service's rate limit`,
      ),
    )
  })

  it('on a terminal: a progress bar with the rate and the time left', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    const { code, screen } = await runOnTerminal(kit.installed(), ['export', '--out', out], { env: service.env })
    expect(code).toBe(0)
    expect(screen).toMatch(new RegExp(`messages [=-]+ 100\\.0% \\| ${DATASET.messages}/${DATASET.messages} \\| [\\d,]+/s \\| ETA \\S+`))
    await expectContent(out, lines(service))
    expectNoSecret({ screen }, [service.env['CHAT_SERVICE_KEY_SECRET'] ?? ''])
  })
})

describe('export: files it did not write', () => {
  it('a cursor file that is not one: exit 1 before anything is written or sent', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    await writeFile(`${out}.cursor`, 'not json')
    const ran = await runCli(kit.installed(), ['export', '--out', out], { env: service.env })
    expect(ran).toMatchObject({
      code: 1,
      stderr: `chat-service: ${out}.cursor is not a cursor file of chat-service export; delete it to start a new export\n`,
    })
    expect(service.fake.requests).toHaveLength(0)
    expect(await exists(out)).toBe(false)
  })
})
