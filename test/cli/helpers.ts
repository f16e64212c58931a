// Helpers of the `chat-service` tests: the command as a user gets it (the package built once per test run, packed
// by `npm pack` with the package's own `files`, unpacked into a fresh project's node_modules, its
// dependencies linked), run as a child process against the fake service in listen mode.
import { execFileSync, spawn } from 'node:child_process'
import { EventEmitter, once } from 'node:events'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import type { FakeServerHandle } from 'chat-service-sdk/testing'
import { packedTarball } from '../helpers/packed-tarball.ts'
import { main, type CliProcess } from '../../src/cli/main.ts'
// What `main` loads only for a command that talks to the service (the SDK, undici, zod), loaded with
// this module rather than first inside a test: zod's globals would appear during the test file, and
// the shared-worker guard would take them for state the file left behind.
import '../../src/cli/run.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** The command, installed from the packed tarball. */
export interface Installed {
  /** The file package.json `bin` names for `chat-service`, in the installed package. */
  readonly bin: string
  /** A project directory whose node_modules holds the package (a place to run and write files). */
  readonly dir: string
  /** The paths the tarball holds (`package/...` stripped). */
  readonly files: readonly string[]
  remove(): void
}

export { packedTarball }

/**
 * Unpacks the package's tarball ({@link packedTarball}, test/helpers/packed-tarball.ts) into a fresh project's node_modules, linking
 * the runtime dependencies: the command as a user installs it, in a directory of the caller's own.
 */
export async function installPacked(): Promise<Installed> {
  const tarball = await packedTarball()
  const dir = mkdtempSync(join(tmpdir(), 'chat-service-cli-project-'))
  const pkg = join(dir, 'node_modules', 'chat-service-sdk')
  mkdirSync(pkg, { recursive: true })
  execFileSync('tar', ['-xzf', tarball, '-C', pkg, '--strip-components=1'])
  const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^package\//, ''))
  for (const name of ['undici', 'zod']) symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name), 'dir')
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { bin: Record<string, string> }
  const bin = manifest.bin['chat-service']
  if (bin === undefined) throw new Error('package.json bin has no chat-service')
  return {
    bin: join(pkg, bin),
    dir,
    files,
    remove: () => {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The environment of a user of `server`: the CHAT_SERVICE_* variables, nothing else of ours. */
export function serviceEnv(server: FakeServerHandle): Record<string, string> {
  const { baseUrl, keyId, keySecret } = server.clientOptions()
  return { CHAT_SERVICE_BASE_URL: baseUrl, CHAT_SERVICE_KEY_ID: keyId, CHAT_SERVICE_KEY_SECRET: keySecret }
}

/**
 * Variables of the test run that would change how the child runs. `--coverage` sets
 * NODE_V8_COVERAGE and NODE_DISABLE_COMPILE_CACHE (the command's coverage is not collected: see
 * baseEnv), and the command's compile cache is under test.
 */
const RUN_ONLY = new Set(['NODE_OPTIONS', 'NODE_PATH', 'NODE_V8_COVERAGE', 'NODE_DISABLE_COMPILE_CACHE'])

/**
 * This process's environment without anything that would change how the child runs or what it
 * reads. The command's coverage is not collected (vitest.config.ts excludes src/cli).
 */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('CHAT_SERVICE_') && !RUN_ONLY.has(name) && !name.startsWith('VITEST')) env[name] = value
  }
  return env
}

/** What a finished run left. */
export interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** A run in progress. */
export interface Running {
  readonly child: ReturnType<typeof spawn>
  stdout(): string
  stderr(): string
  readonly exit: Promise<Ran>
}

/** Options of a run. */
export interface RunOptions {
  readonly env?: Record<string, string | undefined>
  readonly cwd?: string
}

/** Starts `chat-service args...` (the installed bin, on this Node.js). */
export function startCli(installed: Installed, args: readonly string[], options: RunOptions = {}): Running {
  const child = spawn(process.execPath, [installed.bin, ...args], {
    cwd: options.cwd ?? installed.dir,
    env: { ...baseEnv(), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exit = once(child, 'close').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
    stdout,
    stderr,
  }))
  return { child, stdout: () => stdout, stderr: () => stderr, exit }
}

/** Runs `chat-service args...` to its end. */
export function runCli(installed: Installed, args: readonly string[], options: RunOptions = {}): Promise<Ran> {
  return startCli(installed, args, options).exit
}

/**
 * Runs `chat-service args...` in this process, from source: `main` of src/cli/main.ts, the function
 * the bin hands the process to, with the same arguments and environment as {@link runCli} would
 * give the child and its stdout and stderr captured (both piped, not a terminal). What a command
 * does, prints and returns is the same; Node.js's start and the bin's wiring (exit status from
 * `main`'s result, signals, a pipe closed early, --env-file checked by Node.js) are not here: the
 * child-process tests cover those. About 0.3 s of CPU less a run than a child, which loads Node.js,
 * undici and zod afresh.
 *
 * The environment is this process's own for the run, as the bin's is (the SDK reads
 * CHAT_SERVICE_LOG from process.env): the CHAT_SERVICE_* variables are the run's only, put back
 * as they were once the last run going at the same time ends. Runs at the same time must share one
 * environment.
 */
export async function runInProcess(args: readonly string[], options: Pick<RunOptions, 'env'> = {}): Promise<Ran> {
  const own = Object.fromEntries(
    Object.entries(options.env ?? {}).filter(
      (entry): entry is [string, string] => entry[0].startsWith('CHAT_SERVICE_') && entry[1] !== undefined,
    ),
  )
  if ('CHAT_SERVICE_DEBUG_STOP_AT' in own) throw new Error('CHAT_SERVICE_DEBUG_STOP_AT stops the process it runs in: use runCli')
  const key = JSON.stringify(Object.entries(own).sort())
  if (inProcess.running === 0) {
    inProcess.saved = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('CHAT_SERVICE_')))
    inProcess.key = key
    setServiceVariables(own)
  } else if (inProcess.key !== key) {
    throw new Error('in-process runs at the same time must share one environment (it is the process’s own)')
  }
  inProcess.running++
  let stdout = ''
  let stderr = ''
  const signals = new EventEmitter()
  const io: CliProcess = {
    stdout: capture((text) => (stdout += text)),
    stderr: capture((text) => (stderr += text)),
    env: process.env,
    on: (signal, listener) => signals.on(signal, listener),
    off: (signal, listener) => signals.off(signal, listener),
    exit: (code) => {
      throw new Error(`exit(${code}) called in-process: only a second signal does that, and only a child process gets one`)
    },
  }
  try {
    const code = await main(args, io)
    return { code, signal: null, stdout, stderr }
  } finally {
    if (--inProcess.running === 0) setServiceVariables(inProcess.saved)
  }
}

/** The in-process runs going on in this process, and the CHAT_SERVICE_* variables to put back after them. */
const inProcess = { running: 0, key: '', saved: {} as Record<string, string | undefined> }

/** Makes the CHAT_SERVICE_* variables of process.env exactly `variables`. */
function setServiceVariables(variables: Record<string, string | undefined>): void {
  for (const name of Object.keys(process.env)) if (name.startsWith('CHAT_SERVICE_')) Reflect.deleteProperty(process.env, name)
  for (const [name, value] of Object.entries(variables)) if (value !== undefined) process.env[name] = value
}

/** A stream that hands each write to `append`, as text: stdout or stderr of an in-process run. */
function capture(append: (text: string) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      append(chunk.toString('utf8'))
      callback()
    },
  })
}

/** Quotes `value` for a POSIX shell. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`
}

/**
 * Runs `chat-service args...` on a terminal: a pseudo-terminal made by `script` (util-linux,
 * in every Debian), 100 columns wide. Its stdout and stderr both go to the terminal: the text is
 * what the person at it sees.
 */
export async function runOnTerminal(
  installed: Installed,
  args: readonly string[],
  options: RunOptions = {},
): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, installed.bin, ...args].map(shellQuote).join(' ')
  const ran = await new Promise<Ran>((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', `stty cols 100; exec ${command}`, '/dev/null'], {
      cwd: options.cwd ?? installed.dir,
      env: { ...baseEnv(), ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code, signal) => {
      resolve({ code, signal, stdout, stderr })
    })
  })
  return { code: ran.code, screen: ran.stdout.replaceAll('\r\n', '\n') }
}

/** JSON Lines as values, checking that every line is one JSON value. */
export function jsonLines(text: string): unknown[] {
  expect(text === '' || text.endsWith('\n'), 'JSON Lines end with a newline').toBe(true)
  return text
    .split('\n')
    .slice(0, -1)
    .map((line) => JSON.parse(line) as unknown)
}

/** Asserts that none of `secrets` appears in what a run wrote. */
export function expectNoSecret(ran: { stdout?: string; stderr?: string; screen?: string }, secrets: readonly string[]): void {
  const text = `${ran.stdout ?? ''}${ran.stderr ?? ''}${ran.screen ?? ''}`
  for (const secret of secrets) expect(text.includes(secret), `a secret reached the output: ${text.slice(0, 500)}`).toBe(false)
}

/** Resolves once `check` holds (every `everyMs`, 5 ms by default); rejects after `ms`. */
export async function poll(check: () => boolean | Promise<boolean>, ms = 30_000, everyMs = 5): Promise<void> {
  const deadline = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error('Condition not met in time')
    await sleep(everyMs)
  }
}
