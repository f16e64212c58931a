// The lock of `chat-service export` under the timings that broke it: a takeover that comes late,
// a holder paused (Ctrl-Z) for longer than a minute, a taker that dies half way, a lock left empty
// by a full disk, a holder on another host (a process in other pid and UTS namespaces, as another
// container on a shared volume) and races of several exports. The interleavings are forced: the
// command's debug stop points (CHAT_SERVICE_DEBUG_STOP_AT, a SIGSTOP of itself at a named step)
// and SIGSTOP/SIGCONT from here, not luck. Whatever the timing, the output ends up holding every
// message once and at most one export writes it. The exports that hold, take, race for or refuse
// the lock are processes of their own (`start`, `exportRun`); the runs that only have to finish
// (the set-up of a half-done export, a takeover of a lock whose holder is gone) run in-process
// (`exportToEnd`, through `main`): their lock is judged and written as a child's is, by a process
// that outlives them.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { utimes, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { basename, dirname } from 'node:path'
import { describe, expect, it } from 'vitest'
import { poll } from './helpers.ts'
import { exists, expectContent, hold, lines, processState, requested, sizeOf, stopped, useExportKit, type Service } from './export-kit.ts'

const kit = useExportKit({ runs: 'child-for-failures' })
const { serve, file, start, exportToEnd, exportRun } = kit

/**
 * An export stopped (SIGSTOP) while it waits for conversation 30, every line before it written,
 * whose lock was last refreshed two minutes ago: what another host sees of a holder paused past a
 * minute.
 */
async function holderStoppedPastAMinute(): Promise<{ service: Service; out: string; first: ReturnType<typeof start> }> {
  const service = await serve()
  const out = file('messages.jsonl')
  await exportToEnd(service, ['--out', out, '--max-items', '200'])
  // Conversation 30 comes 10 s late: the run is idle, every line before it written, when it is
  // stopped (10 s, not 5: on a loaded machine the command's start and 30 pages may take seconds).
  hold(service, 30, 10_000)
  const first = start(service, ['--out', out])
  const before30 = Buffer.byteLength(lines(service, service.fake.listConversations(service.company).slice(0, 30)))
  await poll(async () => (await sizeOf(out)) === before30)
  first.child.kill('SIGSTOP')
  await stopped(first.child.pid)
  const longAgo = new Date(Date.now() - 120_000)
  await utimes(`${out}.cursor.lock`, longAgo, longAgo)
  return { service, out, first }
}

/** A pid that no process has (one that ran and was reaped). */
function deadPid(): number {
  return spawnSync('true').pid
}

/** Where this machine's pids are comparable, as the command records it (this test's children share it). */
const SPACE = `linux:${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}:${readlinkSync('/proc/self/ns/pid')}`

/** Writes the lock of an export that died on this host (its process is gone). */
async function deadLock(path: string): Promise<void> {
  const record = {
    lock: 'chat-service export',
    version: 1,
    token: 'dead0000dead0000dead0000',
    pid: deadPid(),
    host: hostname(),
    space: SPACE,
    started: 1,
    since: '2030-01-01T00:00:00.000Z',
    files: path,
  }
  await writeFile(path, `${JSON.stringify(record)}\n`)
}

/** The lock's files beside `out` (the lock, claims of takeovers): none once every export is done. */
function lockFiles(out: string): string[] {
  return readdirSync(dirname(out)).filter((name) => name.startsWith(`${basename(out)}.cursor.lock`) && !name.endsWith('.new'))
}

/** Runs `chat-service export args...` on "another host": a child in its own pid and UTS namespaces (hostname other-host), sharing the files. */
function onOtherHost(
  service: Service,
  args: readonly string[],
  extraEnv: Record<string, string> = {},
): ReturnType<typeof kit.startProgram> {
  // sh stays pid 1 of the namespace, so that the command (pid 2) can be stopped like any process.
  return kit.startProgram(
    'unshare',
    [
      '--uts',
      '--pid',
      '--fork',
      '--mount-proc',
      'sh',
      '-c',
      'hostname other-host && "$0" "$@"',
      process.execPath,
      kit.installed().bin,
      'export',
      ...args,
    ],
    { ...service.env, ...extraEnv },
  )
}

/** The processes under `pid` (children, grandchildren, ...), from /proc. */
function descendants(pid: number): number[] {
  let children: number[]
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
  return children.flatMap((child) => [child, ...descendants(child)])
}

describe('export: one export at a time, whatever the timing', { timeout: 60_000 }, () => {
  it('a takeover that comes late (it judged a dead lock, then slept while another took it over) backs off: it removes no fresh lock', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    await deadLock(`${out}.cursor.lock`)
    const late = start(service, ['--out', out], { CHAT_SERVICE_DEBUG_STOP_AT: 'lock:judged' })
    await stopped(late.child.pid) // it found the dead export's lock, and is about to take it over
    const winner = start(service, ['--out', out], { CHAT_SERVICE_DEBUG_STOP_AT: 'lock:held' })
    await stopped(winner.child.pid) // it took the lock over, and holds it
    late.child.kill('SIGCONT')
    const refused = await late.exit
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stderr).toContain(`another export is running on these files (pid ${winner.child.pid} on ${hostname()}`)
    expect(refused.stderr).toContain('it is stopped (Ctrl-Z or SIGSTOP)')
    winner.child.kill('SIGCONT')
    expect((await winner.exit).code).toBe(0)
    await expectContent(out, lines(service))
    expect(lockFiles(out)).toEqual([])
  })

  it('a taker stopped while it holds the claim of a dead lock: another refuses, naming it; killed there, its claim and the lock are taken over', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    await deadLock(`${out}.cursor.lock`)
    const taker = start(service, ['--out', out], { CHAT_SERVICE_DEBUG_STOP_AT: 'lock:claimed' })
    await stopped(taker.child.pid)
    const second = await exportRun(service, ['--out', out])
    expect(second.code, second.stderr).toBe(1)
    expect(second.stderr).toContain(`another export is taking over the lock of these files (pid ${taker.child.pid} on ${hostname()}`)
    taker.child.kill('SIGKILL')
    await taker.exit
    const third = await exportToEnd(service, ['--out', out])
    expect(third.stderr).toContain('is gone: taken over')
    await expectContent(out, lines(service))
    expect(lockFiles(out)).toEqual([])
  })

  it('a holder paused (Ctrl-Z) for longer than a minute keeps its lock: another export refuses, saying it is stopped; resumed, it finishes alone', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    const held = hold(service, 30, 1_500)
    const paused = start(service, ['--out', out])
    await requested(service, held)
    paused.child.kill('SIGSTOP')
    await stopped(paused.child.pid)
    const longAgo = new Date(Date.now() - 120_000) // not refreshed for two minutes, as after a long pause
    await utimes(`${out}.cursor.lock`, longAgo, longAgo)
    const second = await exportRun(service, ['--out', out])
    expect(second.code, second.stderr).toBe(1)
    expect(second.stderr).toContain(`(pid ${paused.child.pid} on ${hostname()}`)
    expect(second.stderr).toContain(
      `it is stopped (Ctrl-Z or SIGSTOP): \`fg\` in its shell or \`kill -CONT ${paused.child.pid}\` lets it go on`,
    )
    paused.child.kill('SIGCONT')
    expect((await paused.exit).code).toBe(0)
    await expectContent(out, lines(service))
  })

  it('a holder paused past a minute on one host loses its lock to another host, and stops before its next write: no line twice', async () => {
    // A resumed run appends (O_APPEND): a line it wrote after losing its lock would come twice.
    const { service, out, first } = await holderStoppedPastAMinute()
    const other = await onOtherHost(service, ['--out', out]).exit
    expect(other.code, other.stderr).toBe(0)
    await expectContent(out, lines(service))
    first.child.kill('SIGCONT') // its page arrives: it must not write it
    const lost = await first.exit
    await expectContent(out, lines(service))
    expect(await exists(`${out}.cursor`)).toBe(false)
    expect(lockFiles(out)).toEqual([])
    expect(lost.code, lost.stderr).toBe(1)
    expect(lost.stderr).toContain(`this export lost its lock ${out}.cursor.lock (the lock file is gone`)
    expect(lost.stderr).toContain('it stops here without writing more')
    expect(other.stderr).toContain(`of pid ${first.child.pid} on ${hostname()}`)
    expect(other.stderr).toMatch(/\(another machine or container\) was not refreshed for 1\d\d s: taken over/)
  })

  it('the same while the other host holds the lock and has cut the output back: the paused one stops, the other finishes, one export', async () => {
    const { service, out, first } = await holderStoppedPastAMinute()
    const other = onOtherHost(service, ['--out', out], { CHAT_SERVICE_DEBUG_STOP_AT: 'export:ready' })
    let command: number | undefined
    await poll(() => {
      command = descendants(other.child.pid ?? 0).find((pid) => processState(pid) === 'T')
      return command !== undefined
    })
    first.child.kill('SIGCONT')
    const lost = await first.exit
    expect(lost.code, lost.stderr).toBe(1)
    expect(lost.stderr).toMatch(/this export lost its lock .* \(it is held by pid \d+ on other-host, since /)
    process.kill(command ?? 0, 'SIGCONT')
    expect((await other.exit).code).toBe(0)
    await expectContent(out, lines(service))
  })

  it('an empty or half-written lock (a full disk when an older version started) is taken over at once, saying so', async () => {
    const service = await serve()
    for (const text of ['', '{"pid":12']) {
      const out = file('messages.jsonl')
      await writeFile(`${out}.cursor.lock`, text)
      const ran = await exportToEnd(service, ['--out', out])
      expect(ran.stderr).toContain(`${out}.cursor.lock was ${text === '' ? 'empty' : 'not a lock this command can read'}`)
      await expectContent(out, lines(service))
    }
  })

  it('four exports started at once on a dead lock: one writes, the others refuse; one export in the file', async () => {
    const service = await serve()
    const out = file('messages.jsonl')
    await deadLock(`${out}.cursor.lock`)
    hold(service, 30, 5_000) // the one that wins is still running when the others look (four starts on a loaded machine may lie seconds apart)
    const runs = await Promise.all(Array.from({ length: 4 }, () => exportRun(service, ['--out', out])))
    const codes = runs.map((ran) => ran.code)
    expect(codes.filter((code) => code === 0).length).toBeGreaterThanOrEqual(1)
    for (const ran of runs.filter((candidate) => candidate.code !== 0)) {
      expect(ran.code).toBe(1)
      expect(ran.stderr).toMatch(/another export is (running on these files|taking over the lock of these files)/)
    }
    await expectContent(out, lines(service))
    expect(lockFiles(out)).toEqual([])
  })
})
