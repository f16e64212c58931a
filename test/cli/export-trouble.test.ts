// `chat-service export` when the disk or the reader gives out, and when it must refuse: a full
// disk (a small tmpfs mounted for the test: this file needs root, as CI runs it), a full inode
// table, stdout on /dev/full, stdout's reader going away (`| head`), `--out -`, a missing
// directory, and refusals that must change no file. Each ends with a clear message naming the file
// and the errno, never a stack, and the state left so that the next run goes on exactly.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, openSync, closeSync, readdirSync } from 'node:fs'
import { appendFile, readFile, writeFile } from 'node:fs/promises'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { jsonLines, shellQuote, type Ran } from './helpers.ts'
import { aDayPasses, exists, expectContent, lines, linesOf, messagesPath, readJson, sizeOf, useExportKit } from './export-kit.ts'

// Child processes for every run that fails (`exportRun`): a failure here must end as a process ends (its exit
// status and message, no stack or warning on stderr). The runs that must succeed (`exportToEnd`: set-up, and the
// next run once there is room) run `main` in this process: what they prove is in the files they leave.
const kit = useExportKit({ runs: 'child-for-failures' })
const { serve, file, exportToEnd, exportRun } = kit

/** Mounts a tmpfs of `options` (`size=64k,nr_inodes=4`) at a fresh directory, unmounted after the test. */
function smallDisk(options: string): string {
  expect(process.getuid?.(), 'these tests mount a tmpfs: run them as root, as CI does').toBe(0)
  const dir = file('disk')
  mkdirSync(dir)
  execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir])
  kit.after(async () => {
    execFileSync('umount', ['-l', dir])
  })
  return dir
}

/** Changes the limits of the tmpfs at `dir` (`size=4m`): room made. */
function remount(dir: string, options: string): void {
  execFileSync('mount', ['-o', `remount,${options}`, dir])
}

/** Fills the disk of `dir` to the last byte with a file of its own. */
async function fill(dir: string): Promise<string> {
  const filler = join(dir, 'filler')
  const block = Buffer.alloc(4096, 0x61)
  for (;;) {
    try {
      await appendFile(filler, block)
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOSPC') return filler
      throw error
    }
  }
}

/** Runs `chat-service export args...` with stdout on the file (or device) `path`. */
async function exportWithStdout(env: Record<string, string>, args: readonly string[], path: string): Promise<Ran> {
  const fd = openSync(path, 'w')
  try {
    const child = spawn(process.execPath, [kit.installed().bin, 'export', ...args], {
      cwd: kit.installed().dir,
      env: { PATH: process.env['PATH'], ...env },
      stdio: ['ignore', fd, 'pipe'],
    })
    let stderr = ''
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null]
    return { code, signal, stdout: '', stderr }
  } finally {
    closeSync(fd)
  }
}

/** Runs `chat-service ARGS | head -n N` in bash with pipefail: the status of the pipe, what head printed, the command's stderr. */
async function pipedToHead(env: Record<string, string>, args: readonly string[], n: number): Promise<Ran> {
  const command = [process.execPath, kit.installed().bin, ...args].map(shellQuote).join(' ')
  const child = spawn('bash', ['-o', 'pipefail', '-c', `${command} | head -n ${n}`], {
    cwd: kit.installed().dir,
    env: { PATH: process.env['PATH'], ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null]
  return { code, signal, stdout, stderr }
}

/** Nothing a user should see when a command ends on a failure it expects. */
function expectNoStack(ran: Ran): void {
  expect(ran.stderr).not.toMatch(/\n\s+at |Cannot call write after a stream was destroyed|Unhandled|ERR_STREAM/)
}

describe('export on a full disk', { timeout: 120_000 }, () => {
  it('full from the start: exit 1 naming the lock file of the output and ENOSPC, nothing left behind; with room, the next run exports at once', async () => {
    const service = await serve()
    const dir = smallDisk('size=64k')
    await fill(dir)
    const out = join(dir, 'messages.jsonl')
    const ran = await exportRun(service, ['--out', out])
    expect(ran.code, ran.stderr).toBe(1)
    expect(ran.stderr).toContain(`cannot create ${out}.cursor.lock (the lock of ${out}): no space left on device (ENOSPC)`)
    expectNoStack(ran)
    expect(readdirSync(dir)).toEqual(['filler']) // no empty lock to block the next run
    remount(dir, 'size=4m')
    await exportToEnd(service, ['--out', out])
    await expectContent(out, lines(service))
  })

  it('filling up mid-way: exit 1 naming the output and ENOSPC, the saved state intact; with room, the same command goes on exactly', async () => {
    const service = await serve()
    const total = Buffer.byteLength(lines(service))
    // Half the export, and a page each for the lock, the cursor file and the one replacing it.
    const dir = smallDisk(`size=${Math.ceil(total / 2 / 4096) * 4096 + 3 * 4096}`)
    const out = join(dir, 'messages.jsonl')
    // Conversation 10 comes 1.5 s late: the state is surely saved once before the disk is full.
    service.fake.failNext(1, { delayMs: 1_500, match: { method: 'GET', path: messagesPath(service, 10) } })
    const ran = await exportRun(service, ['--out', out])
    expect(ran.code, ran.stderr).toBe(1)
    expect(ran.stderr).toContain(`chat-service: cannot write ${out} (the output): no space left on device (ENOSPC)`)
    expect(ran.stderr).toMatch(/once there is room, run the same command again to go on \(after message \d+, from .*\.cursor\)/)
    expectNoStack(ran)
    const saved = (await readJson(`${out}.cursor`)) as { bytes: number; done: number }
    expect(saved.done).toBeGreaterThan(0)
    expect(await sizeOf(out)).toBeGreaterThanOrEqual(saved.bytes)
    remount(dir, 'size=4m')
    const resumed = await exportToEnd(service, ['--out', out])
    expect(resumed.stderr).toContain(`resuming after message ${saved.done}`)
    await expectContent(out, lines(service))
  })

  it("the file system's inode table full when the checkpoint is saved: exit 1 naming the checkpoint file, which is left as it was", async () => {
    const service = await serve()
    const dir = smallDisk('size=4m,nr_inodes=100')
    const checkpoint = join(dir, 'messages.checkpoint.json')
    await exportToEnd(service, ['--out', join(dir, 'night-1.jsonl'), '--checkpoint', checkpoint])
    const before = await readFile(checkpoint, 'utf8')
    const added = aDayPasses(service, 2)
    // The root, night 1, the checkpoint, its lock, night 2's lock (a --checkpoint run takes its
    // output's too) and night 2: no inode for the checkpoint's replacement.
    remount(dir, 'nr_inodes=6')
    const night2 = join(dir, 'night-2.jsonl')
    const ran = await exportRun(service, ['--out', night2, '--checkpoint', checkpoint])
    expect(ran.code, ran.stderr).toBe(1)
    expect(ran.stderr).toContain(`chat-service: cannot write ${checkpoint} (the checkpoint file): no space left on device (ENOSPC)`)
    expectNoStack(ran)
    expect(await readFile(checkpoint, 'utf8')).toBe(before)
    remount(dir, 'nr_inodes=100')
    await exportToEnd(service, ['--out', night2, '--checkpoint', checkpoint])
    await expectContent(night2, linesOf(service, added))
  })

  it('stdout on a full device (--out - > /dev/full): exit 1, "cannot write stdout", ENOSPC, no stack', async () => {
    const service = await serve()
    const ran = await exportWithStdout(service.env, ['--out', '-'], '/dev/full')
    expect(ran.code, ran.stderr).toBe(1)
    expect(ran.stderr).toContain('chat-service: cannot write stdout (the output): no space left on device (ENOSPC)')
    expectNoStack(ran)
  })
})

describe('export --out - (stdout) and other streams', { timeout: 120_000 }, () => {
  it('--out -: every message on stdout, said not to be resumable, no file made', async () => {
    const service = await serve()
    const before = readdirSync(kit.installed().dir)
    const ran = await exportRun(service, ['--out', '-'])
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout === lines(service), 'stdout holds every message once, in order').toBe(true)
    expect(ran.stderr).toContain('to stdout, which is not resumable: an interrupted export starts over')
    expect(readdirSync(kit.installed().dir)).toEqual(before)
  })

  it.each([['-'], ['/dev/stdout']])(
    '--out %s | head -n 5: the export ends quietly when the reader goes away (exit 0, no error)',
    async (out) => {
      const service = await serve()
      const ran = await pipedToHead(service.env, ['export', '--out', out], 5)
      expect(ran.code, ran.stderr).toBe(0)
      expect(jsonLines(ran.stdout)).toEqual(
        lines(service)
          .split('\n')
          .slice(0, 5)
          .map((line) => JSON.parse(line) as unknown),
      )
      expect(ran.stderr).not.toMatch(/error|cannot|failed/i)
      expectNoStack(ran)
    },
  )

  it('--out - --checkpoint CFILE: CFILE is saved only when the run finishes; a reader gone early leaves none', async () => {
    const service = await serve()
    const checkpoint = file('messages.checkpoint.json')
    const cut = await pipedToHead(service.env, ['export', '--out', '-', '--checkpoint', checkpoint], 1)
    expect(cut.code, cut.stderr).toBe(0)
    expect(cut.stderr).toContain(`${checkpoint} is not updated (the next run sends them again)`)
    expectNoStack(cut)
    expect(await exists(checkpoint)).toBe(false)
    const night1 = await exportRun(service, ['--out', '-', '--checkpoint', checkpoint])
    expect(night1.code, night1.stderr).toBe(0)
    expect(night1.stdout === lines(service)).toBe(true)
    expect(night1.stderr).toContain(`${checkpoint} is updated only when this run finishes`)
    expect(await readJson(checkpoint)).toMatchObject({ run: null, last: { out: 'stdout', written: 3_000 } })
    const added = aDayPasses(service, 2)
    const night2 = await exportRun(service, ['--out', '-', '--checkpoint', checkpoint])
    expect(night2.stdout === linesOf(service, added)).toBe(true)
  })

  it('--out in a directory that does not exist: exit 1 naming the output (not its lock), nothing sent', async () => {
    const service = await serve()
    const out = join(kit.installed().dir, 'no-such-directory', 'messages.jsonl')
    const ran = await exportRun(service, ['--out', out])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toBe(
      `chat-service: cannot write ${out} (the output): its directory ${join(kit.installed().dir, 'no-such-directory')} does not exist (ENOENT)\n`,
    )
    expect(service.fake.requests).toHaveLength(0)
  })
})

describe('export refusals change no file', { timeout: 60_000 }, () => {
  it('a checkpoint the SDK refuses, with an unfinished run whose output has lines past the saved point: exit 1, neither file touched', async () => {
    const service = await serve()
    const checkpoint = file('messages.checkpoint.json')
    const out = file('night-1.jsonl')
    await exportToEnd(service, ['--out', out, '--checkpoint', checkpoint, '--max-items', '100'])
    await appendFile(out, '{"a line a crash left past the saved point":true}\n')
    const state = (await readJson(checkpoint)) as { checkpoint: { conversations: unknown } }
    state.checkpoint.conversations = 'broken'
    await writeFile(checkpoint, JSON.stringify(state))
    const outBefore = await readFile(out, 'utf8')
    const checkpointBefore = await readFile(checkpoint, 'utf8')
    const ran = await exportRun(service, ['--out', out, '--checkpoint', checkpoint])
    expect(ran.code, ran.stderr).toBe(1)
    expect(ran.stderr).toContain(`${checkpoint} holds a checkpoint the SDK refuses`)
    expect(await readFile(out, 'utf8')).toBe(outBefore)
    expect(await readFile(checkpoint, 'utf8')).toBe(checkpointBefore)
    expect(await exists(`${checkpoint}.lock`)).toBe(false)
  })

  it('an unfinished export of another shard: exit 1, its output (lines past the saved point included) and cursor untouched', async () => {
    const service = await serve()
    const out = file('shard.jsonl')
    await exportToEnd(service, ['--out', out, '--shard', '1/3', '--max-items', '10'])
    await appendFile(out, '{"a line a crash left past the saved point":true}\n')
    const outBefore = await readFile(out, 'utf8')
    const cursorBefore = await readFile(`${out}.cursor`, 'utf8')
    const ran = await exportRun(service, ['--out', out, '--shard', '0/3'])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain('is an unfinished export of shard 1/3, not shard 0/3')
    expect(await readFile(out, 'utf8')).toBe(outBefore)
    expect(await readFile(`${out}.cursor`, 'utf8')).toBe(cursorBefore)
  })
})
