/**
 * The entry of `chat-service` (the bin, bin.ts, hands it the process): reads the command line and
 * answers `--help` and `--version` itself; a command that talks to the service runs in run.ts,
 * loaded only then, because loading the SDK (undici and zod) is most of the command's start-up
 * time and help needs none of it.
 *
 * Exit status: 0 ok (also when stdout's reader goes away early, `| head`), 1 a failure (the SDK's
 * error message, already redacted, on stderr), 2 usage (an unknown command or option, a bad
 * value, with the help text), 130 interrupted by Ctrl-C (SIGINT), 143 terminated (SIGTERM).
 *
 * @module
 */
import { parseCommandLine, UsageError, type Invocation } from './args.ts'
import { commandHelp, generalHelp } from './commands.ts'
import type { OutputStream } from './output.ts'
import type { ProgressStream } from './progress.ts'
import { VERSION } from '../version.ts'

/**
 * The package's version: the SDK's `VERSION` (src/version.ts, a constant bundled into the bin), so
 * that `--version` and help load neither the SDK (undici and zod are most of the start-up) nor
 * package.json (bundled, it would ship the devDependencies and scripts inside the bin).
 */
export const CLI_VERSION: string = VERSION

/** Exit statuses (see the module comment). */
export const EXIT = { ok: 0, failure: 1, usage: 2, SIGINT: 130, SIGTERM: 143 } as const

/** The signals that stop a command: the first stops it cleanly, a second exits at once. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const
/** One of {@link STOP_SIGNALS}. */
export type StopSignal = (typeof STOP_SIGNALS)[number]

/** The parts of the process the command uses; the repository's export example passes its own environment. */
export interface CliProcess {
  readonly stdout: OutputStream
  readonly stderr: ProgressStream & { write(text: string): boolean }
  /** The environment the client reads (`CHAT_SERVICE_*`); `--env-file` adds to it. */
  readonly env: NodeJS.ProcessEnv
  on(signal: StopSignal, listener: () => void): unknown
  off(signal: StopSignal, listener: () => void): unknown
  exit(code: number): never
}

/** Writes a usage error with the help of its command (or the general help) on stderr; returns exit status 2. */
export function usage(error: UsageError, stderr: CliProcess['stderr']): number {
  const help = error.command === undefined ? generalHelp(CLI_VERSION) : commandHelp(error.command)
  stderr.write(`chat-service: ${error.message}\n\n${help}`)
  return EXIT.usage
}

/**
 * Runs `chat-service` with `args` (without the node and script paths) and resolves with its exit
 * status. Output, the environment and signals come from `io` (default: this process).
 */
export async function main(args: readonly string[], io: CliProcess = process): Promise<number> {
  let invocation: Invocation
  try {
    invocation = parseCommandLine(args)
  } catch (error) {
    if (error instanceof UsageError) return usage(error, io.stderr)
    throw error
  }
  switch (invocation.action) {
    case 'version':
      io.stdout.write(`chat-service ${CLI_VERSION}\n`)
      return EXIT.ok
    case 'help':
      io.stdout.write(invocation.command === undefined ? generalHelp(CLI_VERSION) : commandHelp(invocation.command))
      return EXIT.ok
    case 'run': {
      const { run } = await import('./run.ts')
      return run(invocation, io)
    }
  }
}
