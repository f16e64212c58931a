/**
 * Runs one command of `chat-service` that talks to the service: makes a client from the
 * environment, runs the command with Ctrl-C and SIGTERM wired to its signal, and turns how it
 * ended into an exit status (see main.ts). Built on the SDK's public API only, imported by the
 * package's own name.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { parseEnv } from 'node:util'
import { APIUserAbortError, ChatServiceClient, ENVIRONMENT_VARIABLES, type Logger } from 'chat-service-sdk'
import { stringOption, UsageError, type Invocation } from './args.ts'
import { commandName } from './commands.ts'
import { exportMessages, type ExportContext } from './export.ts'
import { EXIT, STOP_SIGNALS, usage, type CliProcess, type StopSignal } from './main.ts'
import { Stdout } from './output.ts'
import { RESOURCE_COMMANDS, type CommandContext } from './resources.ts'

/** Writes the SDK's log lines on stderr, never stdout (where the data goes). */
function stderrLogger(stderr: CliProcess['stderr']): Logger {
  const line =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      stderr.write(`chat-service: ${level}: ${message}${fields === undefined ? '' : ` ${JSON.stringify(fields)}`}\n`)
    }
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') }
}

/**
 * `--env-file FILE`: the `CHAT_SERVICE_*` variables of FILE (`KEY=value` lines, Node's `.env`
 * syntax), for those the environment does not already set (as Node's own `--env-file` does).
 * Other variables in it are left alone.
 */
function loadEnvFile(path: string, env: NodeJS.ProcessEnv): void {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as { code?: unknown }).code
    throw new Error(`cannot read --env-file ${path}: ${typeof code === 'string' ? code : String(error)}`, { cause: error })
  }
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (name.startsWith('CHAT_SERVICE_') && env[name] === undefined) env[name] = value
  }
}

/** A command that cannot start because its configuration is missing: exit status 1 with this message. */
class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError'
}

/** The variables the command needs and the environment lacks, said for a person at a shell (the SDK's own message speaks of options). */
function checkEnvironment(env: NodeJS.ProcessEnv, baseUrl: string | undefined): void {
  const needed = [
    ...(baseUrl === undefined ? [ENVIRONMENT_VARIABLES.baseUrl] : []),
    ENVIRONMENT_VARIABLES.keyId,
    ENVIRONMENT_VARIABLES.keySecret,
  ]
  const missing = needed.filter((name) => (env[name] ?? '') === '')
  if (missing.length === 0) return
  throw new ConfigurationError(
    `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set: set ${missing.length === 1 ? 'it' : 'them'} in the environment or in a file given with --env-file FILE` +
      `${missing.includes(ENVIRONMENT_VARIABLES.baseUrl) ? ' (or pass --base-url URL)' : ''}; the key pair is never read from a flag`,
  )
}

/** Runs the command of `invocation`; resolves with its exit status. */
export async function run(invocation: Extract<Invocation, { action: 'run' }>, io: CliProcess): Promise<number> {
  const { command, positionals, values } = invocation
  const note = (text: string): void => {
    io.stderr.write(`chat-service: ${text}\n`)
  }
  const out = new Stdout(io.stdout)
  const stop = new AbortController()
  let stoppedBy: StopSignal | undefined
  const onSignal = (signal: StopSignal) => (): void => {
    if (stoppedBy !== undefined) io.exit(EXIT[signal]) // a second signal: at once (an export's saved state still holds)
    stoppedBy = signal
    stop.abort()
  }
  const listeners = STOP_SIGNALS.map((signal) => [signal, onSignal(signal)] as const)
  for (const [signal, listener] of listeners) io.on(signal, listener)
  const onGone = (): void => {
    stop.abort()
  }
  out.gone.addEventListener('abort', onGone, { once: true })
  let client: ChatServiceClient | undefined
  try {
    const envFile = stringOption(values, 'env-file')
    if (envFile !== undefined) loadEnvFile(envFile, io.env)
    const baseUrl = stringOption(values, 'base-url')
    checkEnvironment(io.env, baseUrl)
    // The key pair comes from the environment (and --env-file), and only from there.
    client = new ChatServiceClient({
      baseUrl: baseUrl ?? io.env[ENVIRONMENT_VARIABLES.baseUrl],
      keyId: io.env[ENVIRONMENT_VARIABLES.keyId],
      keySecret: io.env[ENVIRONMENT_VARIABLES.keySecret],
      logger: stderrLogger(io.stderr),
    })
    const context: CommandContext = { client, command, positionals, values, out, note, signal: stop.signal }
    if (command.kind === 'export') {
      const exportContext: ExportContext = { ...context, progress: io.stderr, stoppedBy: () => stoppedBy }
      await exportMessages(exportContext)
    } else {
      const runCommand = RESOURCE_COMMANDS[commandName(command)]
      if (runCommand === undefined) throw new Error(`no implementation of ${commandName(command)}`)
      await runCommand(context)
    }
    if (out.error !== undefined) throw out.error
    return stoppedBy === undefined ? EXIT.ok : EXIT[stoppedBy]
  } catch (error) {
    if (error instanceof UsageError) return usage(error, io.stderr)
    if (stoppedBy !== undefined) return EXIT[stoppedBy]
    // Our own stop because stdout's reader went away (`| head`): what was wanted was written.
    if (out.gone.aborted && out.error === undefined && error instanceof APIUserAbortError) return EXIT.ok
    note(error instanceof Error ? error.message : String(error))
    return EXIT.failure
  } finally {
    for (const [signal, listener] of listeners) io.off(signal, listener)
    out.gone.removeEventListener('abort', onGone)
    await client?.close()
  }
}
