// `chat-service export` as a user runs it (the bin of the packed tarball, a child process, the fake
// in listen mode): a full export and a nightly one (--checkpoint) across runs with data appended
// between them, shards whose files together are one export, and stops of every kind (SIGINT,
// SIGTERM, SIGKILL, --max-items) followed by a run of the same command: the files must then hold
// exactly the lines of an export made in one go, none twice, none missing.
import { appendFile, readFile, writeFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { shardOf } from 'chat-service-sdk'
import { expectNoSecret, poll, runCli, runOnTerminal } from './helpers.ts'
import {
  aDayPasses,
  DATASET,
  exists,
  expectContent,
  hold,
  lines,
  linesOf,
  messagesPath,
  readJson,
  sizeOf,
  useExportKit,
} from './export-kit.ts'

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
    const ran = await runCli(kit.installed(), ['export', '--out', out], { env: service.env })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`${out}.cursor is an unfinished export of shard 1/3, not all shards: finish it with --shard 1/3`)
    const checkpoint = file('shard.checkpoint.json')
    await exportToEnd(service, ['--out', file('n.jsonl'), '--checkpoint', checkpoint, '--shard', '0/2'])
    const other = await runCli(kit.installed(), ['export', '--out', file('n.jsonl'), '--checkpoint', checkpoint, '--shard', '1/2'], {
      env: service.env,
    })
    expect(other.code).toBe(1)
    expect(other.stderr).toContain(`holds the checkpoint of shard 0/2, and this run is shard 1/2`)
  })

  it.each([['2/2'], ['1/0'], ['x'], ['1/70000']])('--shard %s: exit 2, nothing sent', async (shard) => {
    const service = await serve()
    const ran = await runCli(kit.installed(), ['export', '--out', file('x.jsonl'), '--shard', shard], { env: service.env })
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
    const ran = await runCli(kit.installed(), ['export', '--out', out], { env: service.env })
    expect(ran).toMatchObject({
      code: 1,
      stderr: `chat-service: ${out}.cursor is not a cursor file of chat-service export; delete it to start a new export\n`,
    })
    expect(service.fake.requests).toHaveLength(0)
    expect(await exists(out)).toBe(false)
  })
})

describe('export: state files of another service or company', { timeout: 60_000 }, () => {
  it('an unfinished export of another service: exit 1 saying so (both services, where the settings came from), its files untouched', async () => {
    const first = await serve()
    const other = await serve()
    const out = file('messages.jsonl')
    await exportToEnd(first, ['--out', out, '--max-items', '100'])
    await appendFile(out, '{"a line a crash left past the saved point":true}\n')
    const outBefore = await readFile(out, 'utf8')
    const cursorBefore = await readFile(`${out}.cursor`, 'utf8')
    const ran = await kit.exportRun(other, ['--out', out])
    expect(ran.code, ran.stderr).toBe(1)
    const key = first.env['CHAT_SERVICE_KEY_ID'] ?? ''
    expect(ran.stderr).toContain(
      `chat-service: ${out}.cursor belongs to the service ${first.server.url}/rest/v1 (key ${key}), and this run talks to ${other.server.url}/rest/v1 (key ${key}): ` +
        `run it with that service's settings to finish that export, or delete ${out}.cursor to start a new one\n`,
    )
    expect(ran.stderr).toContain(
      `chat-service: settings: base URL ${other.env['CHAT_SERVICE_BASE_URL']} from the environment (CHAT_SERVICE_BASE_URL)\n`,
    )
    expect(await readFile(out, 'utf8')).toBe(outBefore)
    expect(await readFile(`${out}.cursor`, 'utf8')).toBe(cursorBefore)
    expect(other.fake.requests).toHaveLength(0)
  })

  it("a checkpoint file of another service: exit 1, nothing appended, the checkpoint untouched (the next night does not take that service's messages as new)", async () => {
    const first = await serve()
    const other = await serve()
    const checkpoint = file('messages.checkpoint.json')
    await exportToEnd(first, ['--out', file('night-1.jsonl'), '--checkpoint', checkpoint])
    const before = await readFile(checkpoint, 'utf8')
    const night2 = file('night-2.jsonl')
    const ran = await kit.exportRun(other, ['--out', night2, '--checkpoint', checkpoint])
    expect(ran.code, ran.stderr).toBe(1)
    expect(ran.stderr).toContain(`${checkpoint} belongs to the service ${first.server.url}/rest/v1`)
    expect(await readFile(checkpoint, 'utf8')).toBe(before)
    expect(await exists(night2)).toBe(false)
    expect(other.fake.requests).toHaveLength(0)
  })

  it('a state file written with another key of the same service: refused, saying how to go on after a key rotation; edited so, it goes on', async () => {
    const service = await serve()
    const checkpoint = file('messages.checkpoint.json')
    await exportToEnd(service, ['--out', file('night-1.jsonl'), '--checkpoint', checkpoint])
    const key = service.env['CHAT_SERVICE_KEY_ID'] ?? ''
    await writeFile(checkpoint, (await readFile(checkpoint, 'utf8')).replaceAll(JSON.stringify(key), '"key_retired"'))
    const added = aDayPasses(service, 2)
    const night2 = file('night-2.jsonl')
    const ran = await kit.exportRun(service, ['--out', night2, '--checkpoint', checkpoint])
    expect(ran.code, ran.stderr).toBe(1)
    expect(ran.stderr).toContain(
      `${checkpoint} was written with the key key_retired (another company, or the same one under an older key), and this run uses the key ${key}`,
    )
    expect(ran.stderr).toContain(
      `If it is the same company under a new key, replace the key id key_retired with ${key} wherever ${checkpoint} holds it`,
    )
    await writeFile(checkpoint, (await readFile(checkpoint, 'utf8')).replaceAll('"key_retired"', JSON.stringify(key)))
    await exportToEnd(service, ['--out', night2, '--checkpoint', checkpoint])
    await expectContent(night2, linesOf(service, added))
  })
})

describe('export --previous-checkpoint: a new number of shards', { timeout: 90_000 }, () => {
  /** Night 1 over three shards: their checkpoint files. */
  async function threeShards(service: Awaited<ReturnType<typeof serve>>): Promise<string[]> {
    const checkpoints = [0, 1, 2].map((index) => file(`shard-${index}-of-3.checkpoint.json`))
    await Promise.all(
      checkpoints.map((checkpoint, index) =>
        exportToEnd(service, ['--out', file(`night-1-${index}.jsonl`), '--shard', `${index}/3`, '--checkpoint', checkpoint]),
      ),
    )
    return checkpoints
  }

  it("from 3 shards to 2: each new shard starts from every previous shard's checkpoint, and the two files hold only what was added", async () => {
    const service = await serve()
    const previous = await threeShards(service)
    const added = aDayPasses(service, 2)
    const news = [0, 1].map((index) => file(`shard-${index}-of-2.checkpoint.json`))
    const outs = [0, 1].map((index) => file(`night-2-${index}.jsonl`))
    const runs = await Promise.all(
      [0, 1].map((index) =>
        exportToEnd(service, [
          '--out',
          outs[index] ?? '',
          '--shard',
          `${index}/2`,
          '--checkpoint',
          news[index] ?? '',
          ...previous.flatMap((path) => ['--previous-checkpoint', path]),
        ]),
      ),
    )
    const night2 = await Promise.all(outs.map((out) => readFile(out, 'utf8')))
    expect(night2.join('').split('\n').sort()).toEqual(linesOf(service, added).split('\n').sort())
    expect(runs[0]?.stderr).toContain('exporting the messages added since the previous checkpoints')
    expect(await readJson(news[1] ?? '')).toMatchObject({ shard: '1/2', run: null })
    // Night 3 goes on from the new files alone.
    const night3 = await Promise.all(
      [0, 1].map(async (index) => {
        const out = file(`night-3-${index}.jsonl`)
        await exportToEnd(service, ['--out', out, '--shard', `${index}/2`, '--checkpoint', news[index] ?? ''])
        return readFile(out, 'utf8')
      }),
    )
    expect(night3).toEqual(['', ''])
  })

  it.each([
    ['a missing shard', (previous: string[]) => previous.slice(0, 2), 'the files hold 2 of the 3 shards; 2/3 is missing'],
    ['the same shard twice', (previous: string[]) => [previous[0] ?? '', previous[0] ?? '', previous[1] ?? ''], 'are both shard 0/3'],
    ['a file that is not there', (previous: string[]) => [...previous, file('nope.json')], 'there is no such file'],
  ])('%s: exit 1 saying so, no file made', async (_, pick, message) => {
    const service = await serve()
    const previous = pick(await threeShards(service))
    const checkpoint = file('shard-0-of-2.checkpoint.json')
    const out = file('night-2-0.jsonl')
    const ran = await kit.exportRun(service, [
      '--out',
      out,
      '--shard',
      '0/2',
      '--checkpoint',
      checkpoint,
      ...previous.flatMap((path) => ['--previous-checkpoint', path]),
    ])
    expect(ran.code, ran.stderr).toBe(1)
    expect(ran.stderr).toContain(message)
    expect(await exists(checkpoint)).toBe(false)
    expect(await exists(out)).toBe(false)
  })

  it('an unfinished previous shard is refused (finish it first); a shard count changed without --previous-checkpoint says how to do it', async () => {
    const service = await serve()
    const previous = await threeShards(service)
    // Shard 1's night stopped half way: its file says where that run writes.
    const state = (await readJson(previous[1] ?? '')) as Record<string, unknown>
    await writeFile(previous[1] ?? '', JSON.stringify({ ...state, run: { out: file('night-2-1.jsonl'), bytes: 0, written: 0 } }))
    const unfinished = await kit.exportRun(service, [
      '--out',
      file('x.jsonl'),
      '--shard',
      '0/2',
      '--checkpoint',
      file('new.json'),
      ...previous.flatMap((path) => ['--previous-checkpoint', path]),
    ])
    expect(unfinished.code).toBe(1)
    expect(unfinished.stderr).toContain(`--previous-checkpoint ${previous[1]} holds an unfinished run of shard 1/3`)
    const reused = await kit.exportRun(service, ['--out', file('y.jsonl'), '--shard', '0/2', '--checkpoint', previous[0] ?? ''])
    expect(reused.code).toBe(1)
    expect(reused.stderr).toContain(`holds the checkpoint of shard 0/3, and this run is shard 0/2: to change the number of shards`)
    expect(reused.stderr).toContain('--previous-checkpoint FILE')
  })
})
