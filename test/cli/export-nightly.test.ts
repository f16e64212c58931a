// `chat-service export --checkpoint`, the nightly job, as a user runs it (the fake in listen mode;
// the runs that are stopped as child processes of the bin of the packed tarball, the others through
// `main`, the entry the bin uses, in this process: export-kit.ts): nights with data appended between them, stops
// (SIGINT, SIGKILL) followed by the same command, and state files of another service or company:
// the files must hold exactly the lines of an export made in one go, none twice, none missing.
import { appendFile, link, mkdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { poll, runCli } from './helpers.ts'
import {
  aDayPasses,
  DATASET,
  exists,
  expectContent,
  hold,
  lines,
  linesOf,
  readJson,
  sizeOf,
  useExportKit,
  type Service,
} from './export-kit.ts'

const kit = useExportKit()

/** The two ways to run an export into a file: each one's arguments, and the state file it keeps. */
const BOTH_MODES = [
  ['--checkpoint', (out: string) => ['--out', out, '--checkpoint', `${out}.checkpoint.json`], (out: string) => `${out}.checkpoint.json`],
  ['a full export', (out: string) => ['--out', out], (out: string) => `${out}.cursor`],
] as const
const { serve, file, start, exportToEnd, exportRun } = kit

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
    const state = (await readJson(checkpoint)) as { run: { out: string; bytes: number; tail: string; written: number } }
    // `tail`: the fingerprint of the last line saved, which the resume checks before it cuts the file back.
    expect(state.run).toEqual({
      out: night2,
      bytes: await sizeOf(night2),
      tail: expect.stringMatching(/^[0-9a-f]{16}$/) as string,
      written: expect.any(Number) as number,
    })
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

describe('export: a first run that fails before its first message', { timeout: 60_000 }, () => {
  it.each(BOTH_MODES)(
    '%s with a mistyped key id: exit 1, no state file left, and the mended command then exports everything',
    async (_kind, args, state) => {
      const service = await serve()
      const out = file('messages.jsonl')
      const wrong = await kit.exportRun(service, args(out), { CHAT_SERVICE_KEY_ID: 'key_mistyped' })
      expect(wrong.code, wrong.stderr).toBe(1)
      expect(wrong.stderr).toContain(`nothing was exported and ${state(out)} is not`)
      expect(wrong.stderr).toContain('mend what the error names, then run the command again')
      expect(await exists(state(out))).toBe(false)
      // It used to keep the state file, naming the wrong key, and the mended command was refused.
      const mended = await kit.exportRun(service, args(out))
      expect(mended.code, mended.stderr).toBe(0)
      await expectContent(out, lines(service))
    },
  )
})

describe('export: temporary files a killed run left', { timeout: 60_000 }, () => {
  it.each(BOTH_MODES)(
    "%s: the state file's copies older than 10 minutes are removed, and said; a fresh one and names it did not make stay",
    async (_kind, args, state) => {
      const service = await serve()
      const out = file('messages.jsonl')
      // A kill -9 between writing the state's new copy and renaming it leaves `STATE.<12 hex>.tmp`.
      const old = ['0123456789ab', 'ba9876543210', '00000000000a', 'fffffffffff0'].map((hex) => `${state(out)}.${hex}.tmp`)
      const fresh = `${state(out)}.abcdefabcdef.tmp` // another run may be writing it now
      const notOurs = [`${state(out)}.backup.tmp`, `${state(out)}.0123456789ab.tmp.keep`, `${out}.0123456789ab.tmp`]
      const hourAgo = new Date(Date.now() - 3_600_000)
      for (const path of [...old, fresh, ...notOurs]) {
        await writeFile(path, '{"a state":"copy"}\n')
        if (path !== fresh) await utimes(path, hourAgo, hourAgo)
      }
      const ran = await exportToEnd(service, args(out))
      await expectContent(out, lines(service))
      for (const path of old) expect(await exists(path), path).toBe(false)
      for (const path of [fresh, ...notOurs]) expect(await exists(path), path).toBe(true)
      // Three named, the rest counted: a job killed often must not get a line of every name.
      expect(ran.stderr).toMatch(/removed 4 temporary files that a killed run left: (\S+\.tmp, ){2}\S+\.tmp and 1 more\n/)
    },
  )
})

describe("export --checkpoint: a resume over what was written past its unfinished run's saved point", { timeout: 60_000 }, () => {
  /** An unfinished --checkpoint run into `yesterday` (100 messages of it saved); the other files' paths. */
  async function unfinishedYesterday(): Promise<{
    service: Service
    yesterday: string
    today: string
    checkpoint: string
    saved: number
  }> {
    const service = await serve()
    const yesterday = file('messages-1.jsonl')
    const checkpoint = file('messages.checkpoint.json')
    await exportToEnd(service, ['--out', yesterday, '--checkpoint', checkpoint, '--max-items', '100'])
    return { service, yesterday, today: file('messages-2.jsonl'), checkpoint, saved: await sizeOf(yesterday) }
  }

  // Into another file than the unfinished run's: its name has the date in it, and midnight passed.
  it('into another file: cuts that file back only under its lock: exit 1 while another export appends to it, and nothing cut', async () => {
    const { service, yesterday, today, checkpoint, saved } = await unfinishedYesterday()
    const held = hold(service, 10)
    const other = start(service, ['--out', yesterday, '--checkpoint', file('other.checkpoint.json')])
    await poll(async () => service.fake.requests.some((request) => request.path === held) && (await sizeOf(yesterday)) > saved)
    const before = await sizeOf(yesterday)
    const resumed = await runCli(kit.installed(), ['export', '--out', today, '--checkpoint', checkpoint], { env: service.env })
    expect(resumed).toMatchObject({ code: 1, stdout: '' })
    expect(resumed.stderr).toMatch(new RegExp(`^chat-service: another export is running on these files \\(pid ${other.child.pid} on `))
    // Not cut (the other export may still be adding what it had read before conversation 10).
    expect(resumed.stderr).not.toContain('cutting')
    expect(await sizeOf(yesterday)).toBeGreaterThanOrEqual(before)
    expect(await exists(today)).toBe(false)
    other.child.kill('SIGINT')
    expect((await other.exit).code).toBe(130)
  })

  it('refuses, cutting nothing, when a full export has written that file since (its cursor file beside it): its lines would be lost', async () => {
    const { service, yesterday, today, checkpoint } = await unfinishedYesterday()
    await exportToEnd(service, ['--out', yesterday, '--max-items', '300']) // unfinished too: yesterday.cursor stays
    const before = await readFile(yesterday, 'utf8')
    const resumed = await exportRun(service, ['--out', today, '--checkpoint', checkpoint])
    expect(resumed.code, resumed.stderr).toBe(1)
    expect(resumed.stderr).toContain(`${yesterday}.cursor beside it: an unfinished full export has written ${yesterday} since`)
    expect(await readFile(yesterday, 'utf8')).toBe(before)
    expect(await exists(today)).toBe(false)
  })

  it('a hard link to that file is another name with a lock of its own: that lock is taken too (exit 1 while another export appends through it)', async () => {
    const { service, yesterday, checkpoint, saved } = await unfinishedYesterday()
    const linked = file('linked.jsonl')
    await link(yesterday, linked)
    const held = hold(service, 10)
    const other = start(service, ['--out', yesterday, '--checkpoint', file('other.checkpoint.json')])
    await poll(async () => service.fake.requests.some((request) => request.path === held) && (await sizeOf(yesterday)) > saved)
    const resumed = await runCli(kit.installed(), ['export', '--out', linked, '--checkpoint', checkpoint], { env: service.env })
    expect(resumed).toMatchObject({ code: 1, stdout: '' })
    expect(resumed.stderr).toMatch(new RegExp(`^chat-service: another export is running on these files \\(pid ${other.child.pid} on `))
    expect(resumed.stderr).not.toContain('cutting')
    other.child.kill('SIGINT')
    expect((await other.exit).code).toBe(130)
  })

  it('the check for a full export is made again under the lock: one that began between the first check and the lock is not cut', async () => {
    const { service, yesterday, today, checkpoint } = await unfinishedYesterday()
    await appendFile(yesterday, '{"a line the killed run wrote past its saved point":') // something to cut
    const resume = start(service, ['--out', today, '--checkpoint', checkpoint], { CHAT_SERVICE_DEBUG_STOP_AT: 'export:other-checked' })
    await poll(() => resume.stderr().includes('stopped at export:other-checked'))
    await exportToEnd(service, ['--out', yesterday, '--max-items', '300']) // unfinished: yesterday.cursor stays
    const written = await readFile(yesterday, 'utf8')
    resume.child.kill('SIGCONT')
    const ended = await resume.exit
    expect(ended.code, ended.stderr).toBe(1)
    expect(ended.stderr).toContain(`${yesterday}.cursor beside it: an unfinished full export has written ${yesterday} since`)
    expect(await readFile(yesterday, 'utf8')).toBe(written)
  })

  it('takes no lock when that file ends at its saved point (nothing to cut: it may be archived, read-only)', async () => {
    const { service, yesterday, today, checkpoint } = await unfinishedYesterday()
    // A lock that cannot be taken (a directory in its place): taken, the resume would fail.
    await mkdir(`${yesterday}.cursor.lock`)
    const resumed = await exportRun(service, ['--out', today, '--checkpoint', checkpoint])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect((await readFile(yesterday, 'utf8')) + (await readFile(today, 'utf8'))).toBe(lines(service))
  })

  it('into the same file too: refused, nothing cut, when an unfinished full export has written it since', async () => {
    const { service, yesterday, checkpoint } = await unfinishedYesterday()
    await exportToEnd(service, ['--out', yesterday, '--max-items', '300'])
    const written = await readFile(yesterday, 'utf8')
    const resumed = await exportRun(service, ['--out', yesterday, '--checkpoint', checkpoint])
    expect(resumed.code, resumed.stderr).toBe(1)
    expect(resumed.stderr).toContain(`${yesterday}.cursor beside it: an unfinished full export has written ${yesterday} since`)
    expect(await readFile(yesterday, 'utf8')).toBe(written)
  })

  it('the same file spelled another way (a link in its path) is the same file: resumed in it', async () => {
    const service = await serve()
    const real = file('real')
    await mkdir(real)
    const linkDir = file('link')
    await symlink(real, linkDir)
    const checkpoint = file('messages.checkpoint.json')
    await exportToEnd(service, ['--out', join(real, 'messages.jsonl'), '--checkpoint', checkpoint, '--max-items', '100'])
    const resumed = await exportRun(service, ['--out', join(linkDir, 'messages.jsonl'), '--checkpoint', checkpoint])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).not.toContain('the unfinished run wrote to')
    await expectContent(join(real, 'messages.jsonl'), lines(service))
  })
})

describe('export: the output replaced between an unfinished run and its resume', { timeout: 60_000 }, () => {
  it.each(BOTH_MODES)('%s: another, longer file in its place is refused, not cut back and appended to', async (_kind, args, state) => {
    const service = await serve()
    const out = file('messages.jsonl')
    await exportToEnd(service, [...args(out), '--max-items', '100'])
    const saved = await readFile(out, 'utf8')
    // The operator moves the output away and puts another, longer file of lines in its place.
    const other = `${Array.from({ length: 400 }, (_, i) => JSON.stringify({ id: `OTHER_${i}`, note: 'not an export, a file the operator put here' })).join('\n')}\n`
    expect(other.length).toBeGreaterThan(saved.length)
    await writeFile(out, other)
    const stateBefore = await readFile(state(out), 'utf8')
    const ran = await kit.exportRun(service, args(out))
    expect(ran.code, ran.stderr).toBe(1)
    expect(ran.stderr).toContain(`${out} is not the file the unfinished export in ${state(out)} wrote`)
    expect(ran.stderr).toContain(`restore the file it wrote, or delete ${state(out)} to export everything again`)
    expect(await readFile(out, 'utf8')).toBe(other)
    expect(await readFile(state(out), 'utf8')).toBe(stateBefore)
    // The file it wrote, put back: the same command goes on and ends with one full export.
    await writeFile(out, saved)
    expect((await kit.exportRun(service, args(out))).code).toBe(0)
    await expectContent(out, lines(service))
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
