// What the tests of `chat-service`'s commands share (commands.test.ts, commands-users.test.ts,
// commands-config.test.ts: three files, so that vitest runs them side by side): the command
// installed from the packed tarball and a fake service in listen mode, made by `useCommands()`
// before a file's tests and removed after them, and the two ways to run it: `cli` (in this process,
// through `main`) and `cliProcess` (the installed bin, a child process).
//
// The bindings below are live: a file reads them inside its tests, after its `beforeAll` has set
// them. Files that share a worker (vitest.config.ts: `isolate: false`) share this module, one file
// after the other: each file's own `beforeAll` sets them again for it.
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll } from 'vitest'
import { createFakeChatService, generateDataset, type FakeChatService, type FakeServerHandle } from 'chat-service-sdk/testing'
import { expectNoSecret, installPacked, runCli, runInProcess, serviceEnv, type Installed, type Ran, type RunOptions } from './helpers.ts'

export const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string
  scripts: Record<string, string>
}
export const VERSION = PACKAGE.version
export const DATASET = { seed: 11, agents: 5, customerUsers: 250, conversations: 30, messages: 600 }

export let installed: Installed
export let fake: FakeChatService
export let server: FakeServerHandle
export let env: Record<string, string>
export let company: string
/** Secrets no run may print: the key secret, and (added as they are issued) tokens shown nowhere they should not be. */
export let keySecret: string

/** Registers the file's set-up (the installed command, a fake of DATASET listening) and tear-down. */
export function useCommands(): void {
  beforeAll(async () => {
    installed = await installPacked()
    fake = createFakeChatService({ seed: generateDataset(DATASET) })
    server = await fake.listen()
    env = serviceEnv(server)
    keySecret = env['CHAT_SERVICE_KEY_SECRET'] ?? ''
    company = fake.companyIds()[0] ?? ''
  }, 120_000)

  afterAll(async () => {
    await server.close()
    installed.remove()
  })
}

/**
 * Runs the command with the service's environment (and `extra`), in this process (`main`, the
 * entry the bin hands the process to: helpers.ts, `runInProcess`), checking that the key secret is
 * printed nowhere. What only a process shows (the bin, its exit status, signals, pipes, terminals,
 * Node.js's own checks) runs in a child: {@link cliProcess}.
 */
export async function cli(args: readonly string[], options: Pick<RunOptions, 'env'> = {}): Promise<Ran> {
  const ran = await runInProcess(args, { env: { ...env, ...options.env } })
  expectNoSecret(ran, [keySecret])
  return ran
}

/** {@link cli} as a child process: the installed bin of the packed tarball. */
export async function cliProcess(args: readonly string[], options: RunOptions = {}): Promise<Ran> {
  const ran = await runCli(installed, args, { ...options, env: { ...env, ...options.env } })
  expectNoSecret(ran, [keySecret])
  return ran
}

/** The paths of the list requests the fake saw since `from`, as `path?query`. */
export function requestsSince(from: number): string[] {
  return fake.requests.slice(from).map((request) => `${request.method} ${request.rawPath}`)
}
