// What the tests of `chat-service export` share: the command installed from the packed tarball
// (once per file), a fake service per test, fresh file names, runs to their end (in this process
// through `main`, the entry the bin uses, unless a file asks for child processes), runs started as
// child processes and killed at the end of their test, the lines an export must write, and what a
// day adds to the company.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import {
  createFakeChatService,
  type RateLimitOptions,
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
  runInProcess,
  serviceEnv,
  startCli,
  type Installed,
  type Ran,
  type Running,
} from './helpers.ts'

export const DATASET = { seed: 42, agents: 3, customerUsers: 40, conversations: 60, messages: 3_000 }

/** A fake service in listen mode, and the environment of a user of it. */
export interface Service {
  readonly fake: FakeChatService
  readonly server: FakeServerHandle
  readonly env: Record<string, string>
  readonly company: string
}

/** What {@link useExportKit} gives a test file. */
export interface ExportKit {
  readonly installed: () => Installed
  /** A fresh fake service (closed after the test). */
  readonly serve: (options?: { host?: string; rateLimit?: RateLimitOptions }) => Promise<Service>
  /** A fresh file name in the project directory. */
  readonly file: (name: string) => string
  /** Starts `chat-service export args...` (killed at the end of the test if still running). */
  readonly start: (service: Service, args: readonly string[], extraEnv?: Record<string, string | undefined>) => Running
  /** Starts `command args...` (any program: `unshare`, `bash`), killed at the end of the test if still running. */
  readonly startProgram: (command: string, args: readonly string[], env: Record<string, string | undefined>) => Running
  /**
   * Runs `chat-service export args...` to its end, expecting exit 0; no secret in its output. In
   * this process unless the file asked for child processes ({@link ExportKitOptions}).
   */
  readonly exportToEnd: (service: Service, args: readonly string[], extraEnv?: Record<string, string | undefined>) => Promise<Ran>
  /** Runs `chat-service export args...` to its end, whatever its status (where {@link ExportKit.exportToEnd} does). */
  readonly exportRun: (service: Service, args: readonly string[], extraEnv?: Record<string, string | undefined>) => Promise<Ran>
  /** Registers a step to run after the test. */
  readonly after: (step: () => Promise<void>) => void
}

/** How a file's runs to the end are made. */
export interface ExportKitOptions {
  /**
   * `'in-process'` (the default): `main` in this process (helpers.ts, `runInProcess`), some 0.3 s of
   * CPU less a run than a child; `'child-for-failures'`: {@link ExportKit.exportRun} (the runs a
   * test expects may fail: refusals, races for the export's lock, failures on a full disk) as
   * children of the installed bin, whose failure must end as a process ends (its exit status and
   * message, no stack or warning on stderr) and whose lock is told apart from the others' by its
   * process, and {@link ExportKit.exportToEnd} (the runs that only have to finish: set-up, resumes,
   * takeovers of a lock whose holder is gone) in this process.
   */
  readonly runs?: 'in-process' | 'child-for-failures'
}

/** Installs the command for this test file and cleans up after each test. */
export function useExportKit(options: ExportKitOptions = {}): ExportKit {
  let installed: Installed | undefined
  let work = 0
  const cleanup: (() => Promise<void>)[] = []
  beforeAll(async () => {
    installed = await installPacked()
  }, 120_000)
  afterAll(() => {
    installed?.remove()
  })
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step()
  })
  const toEnd = (
    service: Service,
    args: readonly string[],
    extraEnv: Record<string, string | undefined>,
    expected: 'success' | 'any',
  ): Promise<Ran> => {
    const env = { ...service.env, ...extraEnv }
    const child = options.runs === 'child-for-failures' && expected === 'any'
    return child ? runCli(get(), ['export', ...args], { env }) : runInProcess(['export', ...args], { env })
  }
  const get = (): Installed => {
    if (installed === undefined) throw new Error('not installed yet')
    return installed
  }
  const killAtEnd = (running: Running): Running => {
    cleanup.push(async () => {
      if (running.child.exitCode === null && running.child.signalCode === null) {
        running.child.kill('SIGKILL')
        await running.exit
      }
    })
    return running
  }
  return {
    installed: get,
    async serve(options = {}) {
      const fake = createFakeChatService({
        seed: generateDataset(DATASET),
        ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
      })
      const server = await fake.listen(options.host === undefined ? {} : { host: options.host })
      cleanup.push(() => server.close())
      return { fake, server, env: serviceEnv(server), company: fake.companyIds()[0] ?? '' }
    },
    file: (name) => join(get().dir, `${++work}-${name}`),
    start: (service, args, extraEnv = {}) => killAtEnd(startCli(get(), ['export', ...args], { env: { ...service.env, ...extraEnv } })),
    startProgram: (command, args, env) => killAtEnd(startProgram(command, args, env, get().dir)),
    async exportToEnd(service, args, extraEnv = {}) {
      const ran = await toEnd(service, args, extraEnv, 'success')
      expect(ran, ran.stderr).toMatchObject({ code: 0, signal: null, stdout: '' })
      expectNoSecret(ran, [service.env['CHAT_SERVICE_KEY_SECRET'] ?? ''])
      return ran
    },
    exportRun: (service, args, extraEnv = {}) => toEnd(service, args, extraEnv, 'any'),
    after: (step) => cleanup.push(step),
  }
}

/** Starts a program with exactly `env` added to PATH and HOME, capturing its output. */
function startProgram(command: string, args: readonly string[], env: Record<string, string | undefined>, cwd: string): Running {
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exit = new Promise<Ran>((resolve) => {
    child.on('close', (code, signal) => {
      resolve({ code, signal, stdout, stderr })
    })
  })
  return { child, stdout: () => stdout, stderr: () => stderr, exit }
}

/** Every message of the company as the export writes it: conversations in list order, each one's messages oldest first. */
export function lines(service: Service, conversations = service.fake.listConversations(service.company)): string {
  return conversations
    .flatMap((conversation) => service.fake.listMessages(service.company, conversation.id))
    .map((message) => `${JSON.stringify(message)}\n`)
    .join('')
}

/** The path of the messages of the conversation at `index` in list order. */
export function messagesPath(service: Service, index: number): string {
  const conversation = service.fake.listConversations(service.company)[index]
  if (conversation === undefined) throw new Error(`no conversation ${index}`)
  return `/rest/v1/conversations/${conversation.id}/messages`
}

/** Holds the first page of the conversation at `index` for `ms` (a minute by default), so that a run surely stops before it. */
export function hold(service: Service, index: number, ms = 60_000): string {
  const path = messagesPath(service, index)
  service.fake.failNext(1, { delayMs: ms, match: { method: 'GET', path } })
  return path
}

/** Resolves once the fake has seen a request for `path`. */
export async function requested(service: Service, path: string): Promise<void> {
  await poll(() => service.fake.requests.some((request) => request.path === path))
}

export const sizeOf = (path: string): Promise<number> =>
  stat(path).then(
    (s) => s.size,
    () => 0,
  )
export const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  )
export const readJson = async (path: string): Promise<Record<string, unknown> | undefined> =>
  readFile(path, 'utf8').then(
    (text) => JSON.parse(text) as Record<string, unknown>,
    () => undefined,
  )

/** Compares whole files (a diff of thousands of lines helps nobody), with a useful message. */
export async function expectContent(path: string, expected: string): Promise<void> {
  const got = await readFile(path, 'utf8')
  const count = (text: string): number => text.split('\n').length - 1
  expect(got === expected, `${path}: ${count(got)} lines, expected ${count(expected)}`).toBe(true)
}

/** Adds to the company what a day adds: messages in two conversations, and a new conversation with messages. */
export function aDayPasses(service: Service, day: number): MessageRecord[] {
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
export function linesOf(service: Service, messages: readonly MessageRecord[]): string {
  const order = service.fake.listConversations(service.company).map((conversation) => conversation.id)
  return [...messages]
    .sort((a, b) => order.indexOf(a.conversation_id) - order.indexOf(b.conversation_id))
    .map((message) => `${JSON.stringify(message)}\n`)
    .join('')
}

/** The state of process `pid` as /proc shows it: `R`, `S`, `T` (stopped), `Z`; `undefined` when gone. */
export function processState(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[0]
  } catch {
    return undefined
  }
}

/** Resolves once process `pid` is stopped (SIGSTOP, or a debug stop point of the command). */
export async function stopped(pid: number | undefined): Promise<void> {
  if (pid === undefined) throw new Error('no pid')
  await poll(() => processState(pid) === 'T')
}
