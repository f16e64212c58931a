/**
 * Runs one command of `chat-service` that talks to the service: makes a client from the
 * environment, runs the command with Ctrl-C and SIGTERM wired to its signal, and turns how it
 * ended into an exit status (see main.ts). Built on the SDK's public API only, imported by the
 * package's own name.
 *
 * @module
 */
import {
  APIConnectionError,
  APIUserAbortError,
  AuthenticationError,
  ChatServiceClient,
  NotFoundError,
  PermissionDeniedError,
  RequestValidationError,
  type Logger,
} from 'chat-service-sdk'
import { UsageError, type Invocation } from './args.ts'
import { commandName } from './commands.ts'
import { exportMessages, type ExportContext } from './export.ts'
import { EXIT, STOP_SIGNALS, usage, type CliProcess, type StopSignal } from './main.ts'
import { Stdout } from './output.ts'
import { RESOURCE_COMMANDS, type CommandContext } from './resources.ts'
import { FileError } from './files.ts'
import { ConfigurationError, describeBaseUrl, describeSettings, insecureHost, readSettings, sourceText, type Settings } from './settings.ts'

/** Writes the SDK's log lines on stderr, never stdout (where the data goes). */
function stderrLogger(stderr: CliProcess['stderr']): Logger {
  const line =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      stderr.write(`chat-service: ${level}: ${message}${fields === undefined ? '' : ` ${JSON.stringify(fields)}`}\n`)
    }
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') }
}

/** The variables the command needs and lacks, said for a person at a shell (the SDK's own message speaks of options). */
function checkEnvironment(settings: Settings): void {
  const needed = [
    [ChatServiceClient.ENVIRONMENT_VARIABLES.baseUrl, settings.baseUrl],
    [ChatServiceClient.ENVIRONMENT_VARIABLES.keyId, settings.keyId],
    [ChatServiceClient.ENVIRONMENT_VARIABLES.keySecret, settings.keySecret],
  ] as const
  const missing = needed.filter(([, setting]) => (setting.value ?? '') === '').map(([name]) => name)
  if (missing.length === 0) return
  throw new ConfigurationError(
    `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set: set ${missing.length === 1 ? 'it' : 'them'} in the environment or in a file given with --env-file FILE` +
      `${missing.includes(ChatServiceClient.ENVIRONMENT_VARIABLES.baseUrl) ? ' (or pass --base-url URL)' : ''}; the key pair is never read from a flag`,
  )
}

/**
 * Plain http to a host that is not loopback: refused unless allowed (--allow-insecure-http,
 * CHAT_SERVICE_ALLOW_INSECURE_HTTP=1), in the command's words; when allowed, a warning.
 */
function checkInsecureHttp(settings: Settings, note: (text: string) => void): void {
  const host = insecureHost(settings.baseUrl.value)
  if (host === undefined) return
  const allowed = settings.allowInsecureHttp
  if (!allowed.enabled) {
    throw new ConfigurationError(
      `refusing plain http to ${host}, which is not loopback: the key secret would cross the network in clear text. ` +
        'Use https:, or, on a network you trust (a docker-compose network, a test), pass --allow-insecure-http or set CHAT_SERVICE_ALLOW_INSECURE_HTTP=1\n' +
        describeBaseUrl(settings),
    )
  }
  note(`warning: plain http to ${host} (allowed ${sourceText(allowed.source)}): the key secret crosses the network in clear text`)
}

/**
 * Whether `error` (or what caused it) may come from a wrong setting: the service unreachable, the
 * key refused, or a 404 for a whole list (`/rest/v1/agents`, no id in the path, which only a path
 * the service does not serve can answer so) under a base URL with a path (`https://host/api`: the
 * SDK puts `/rest/v1/…` after it). A 404 for one resource (`messages list ID`) may be the service's
 * own "not found": the settings would mislead there.
 */
function dependsOnSettings(error: unknown, settings: Settings): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof APIConnectionError || cause instanceof AuthenticationError || cause instanceof PermissionDeniedError) return true
    if (cause instanceof NotFoundError && namesNoResource(cause.path) && baseUrlHasPath(settings)) return true
  }
  return false
}

/** Whether a request's path (`/api/rest/v1/agents?page=1`) names a list, not one resource of it. */
function namesNoResource(path: string): boolean {
  const rest = path.split('?')[0]?.split('/rest/v1/')[1]
  return rest !== undefined && !rest.includes('/')
}

function baseUrlHasPath(settings: Settings): boolean {
  const value = settings.baseUrl.value
  const path = value === undefined ? undefined : URL.parse(value)?.pathname
  return path !== undefined && path.replace(/\/+$/, '') !== ''
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
  // stderr itself may fail (a full disk under `2> file`): nowhere left to say it, and never a crash.
  const ignore = (): void => undefined
  io.stderr.on('error', ignore)
  let client: ChatServiceClient | undefined
  let settings: Settings | undefined
  try {
    settings = readSettings(values, io.env)
    checkEnvironment(settings)
    checkInsecureHttp(settings, note)
    // The key pair comes from the environment (and --env-file), and only from there.
    client = new ChatServiceClient({
      baseUrl: settings.baseUrl.value,
      keyId: settings.keyId.value,
      keySecret: settings.keySecret.value,
      logger: stderrLogger(io.stderr),
      ...(settings.allowInsecureHttp.enabled ? { allowInsecureHttp: true } : {}),
    })
    const context: CommandContext = { client, command, positionals, values, out, note, signal: stop.signal }
    if (command.kind === 'export') {
      const described = settings
      const exportContext: ExportContext = {
        ...context,
        progress: io.stderr,
        stoppedBy: () => stoppedBy,
        settings: () => describeSettings(described),
      }
      await exportMessages(exportContext)
    } else {
      const runCommand = RESOURCE_COMMANDS[commandName(command)]
      if (runCommand === undefined) throw new Error(`no implementation of ${commandName(command)}`)
      await runCommand(context)
    }
    if (out.error !== undefined) throw new FileError('write', 'stdout', 'the output', out.error)
    return stoppedBy === undefined ? EXIT.ok : EXIT[stoppedBy]
  } catch (error) {
    if (error instanceof UsageError) return usage(error, io.stderr)
    if (stoppedBy !== undefined) return EXIT[stoppedBy]
    // Our own stop because stdout's reader went away (`| head`): what was wanted was written.
    if (out.gone.aborted && out.error === undefined && error instanceof APIUserAbortError) return EXIT.ok
    // Arguments the SDK refuses (nothing sent) that the command's own checks let through: still a usage error.
    if (client !== undefined && command.kind !== 'export' && error instanceof RequestValidationError) {
      return usage(new UsageError(error.message, command), io.stderr)
    }
    const text = error instanceof Error ? error.message : String(error)
    for (const line of text.split('\n')) note(line)
    if (
      settings !== undefined &&
      (dependsOnSettings(error, settings) || (client === undefined && error instanceof RequestValidationError))
    ) {
      for (const line of describeSettings(settings).split('\n')) note(line)
    }
    return EXIT.failure
  } finally {
    for (const [signal, listener] of listeners) io.off(signal, listener)
    out.gone.removeEventListener('abort', onGone)
    io.stderr.removeListener('error', ignore)
    await client?.close()
  }
}
