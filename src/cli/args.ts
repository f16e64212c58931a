/**
 * Reads a `chat-service` command line against the table of commands.ts, with `node:util`
 * `parseArgs` (strict: an unknown option is an error), and checks the values that need no
 * service: integers, the shard, `--metadata` JSON, `--expires-in`, `--format`. Every problem is
 * a {@link UsageError} (exit status 2, with the help text). Pure: no I/O, no SDK.
 *
 * @module
 */
import { parseArgs } from 'node:util'
import { COMMANDS, CREDENTIAL_FLAG, FORMATS, commandName, optionsOf, type CommandSpec, type Format } from './commands.ts'

/** A command line that cannot run: exit status 2, the message and the help of `command` (or the general help) on stderr. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
  /** The command whose help to print, when the words named one. */
  readonly command: CommandSpec | undefined

  constructor(message: string, command?: CommandSpec) {
    super(message)
    this.command = command
  }
}

/** What the command line asks for. */
export type Invocation =
  | { readonly action: 'version' }
  | { readonly action: 'help'; readonly command: CommandSpec | undefined }
  | { readonly action: 'run'; readonly command: CommandSpec; readonly positionals: readonly string[]; readonly values: Values }

/** Option values as parsed: a string, `true`, every value of a repeatable option, or absent. */
export type Values = Readonly<Record<string, string | boolean | readonly string[] | undefined>>

/** The message for a flag that would carry credentials (the value is never repeated). */
export function credentialFlagMessage(flag: string): string {
  const name = flag.split('=')[0] ?? flag
  return (
    `${name} is refused: the key pair comes from CHAT_SERVICE_KEY_ID and CHAT_SERVICE_KEY_SECRET only ` +
    '(the environment, or --env-file FILE), because the value of a flag stays in your shell history and ' +
    '`ps` shows it to every user of the machine'
  )
}

/** The command named by the first words of `args`, and the arguments after them. */
function findCommand(args: readonly string[]): { command: CommandSpec; rest: string[] } | undefined {
  for (const command of COMMANDS) {
    if (command.words.every((word, i) => args[i] === word)) return { command, rest: args.slice(command.words.length) }
  }
  return undefined
}

/** The words that may follow `group` (`users` → find, list, update). */
function verbsOf(group: string): string[] {
  return COMMANDS.filter((command) => command.words[0] === group && command.words.length === 2).map((command) => command.words[1] as string)
}

/**
 * Options that may also stand before the command's words (`chat-service --env-file .env agents
 * list`): whether each takes a value.
 */
const LEADING_OPTIONS: ReadonlyMap<string, boolean> = new Map([
  ['--base-url', true],
  ['--env-file', true],
  ['--format', true],
  ['--max-items', true],
  ['--allow-insecure-http', false],
])

/**
 * Splits the {@link LEADING_OPTIONS} that stand before the command's words off `args`: the command
 * is found in `rest`, and the options are read as if typed right after its words (before anything
 * typed after them, `--` included, so that an option after the command still wins). Stops at the
 * first word that is not such an option with its value.
 */
function splitLeadingOptions(args: readonly string[]): { leading: readonly string[]; rest: readonly string[] } {
  let i = 0
  while (i < args.length) {
    const arg = args[i] ?? ''
    const name = arg.split('=')[0] ?? arg
    const takesValue = LEADING_OPTIONS.get(name)
    if (takesValue === undefined) break
    const next = i + (!takesValue || arg.includes('=') ? 1 : 2)
    if (next > args.length) break
    i = next
  }
  return { leading: args.slice(0, i), rest: args.slice(i) }
}

/** Reads `args` (without the node and script paths). @throws UsageError */
export function parseCommandLine(commandLine: readonly string[]): Invocation {
  // Before anything else, so that no later message can repeat a secret typed after such a flag.
  const credential = commandLine.find((arg) => CREDENTIAL_FLAG.test(arg))
  const { leading, rest: args } = splitLeadingOptions(commandLine) // repeats nothing back
  if (credential !== undefined) throw new UsageError(credentialFlagMessage(credential), findCommand(args)?.command)

  const found = findCommand(args)
  if (found === undefined) {
    const [first] = args
    if (first === undefined) throw new UsageError('a command is required')
    if (first === '--version' || first === '-V') return { action: 'version' }
    if (first === '--help' || first === '-h') return { action: 'help', command: undefined }
    if (first === 'help') {
      const topic = args.length > 1 ? findCommand(args.slice(1)) : undefined
      if (args.length > 1 && topic === undefined) throw new UsageError(`no command ${JSON.stringify(args.slice(1).join(' '))}`)
      return { action: 'help', command: topic?.command }
    }
    const verbs = verbsOf(first)
    if (verbs.length > 0) {
      const second = args[1]
      const what = second === undefined || second.startsWith('-') ? 'needs a subcommand' : `has no subcommand ${JSON.stringify(second)}`
      throw new UsageError(`${first} ${what}: ${verbs.map((verb) => `${first} ${verb}`).join(', ')}`)
    }
    throw new UsageError(`unknown command ${JSON.stringify(first)}`)
  }
  const { command, rest } = found
  const options = optionsOf(command)
  let parsed
  try {
    parsed = parseArgs({
      args: [...leading, ...rest],
      strict: true,
      allowPositionals: true,
      options: Object.fromEntries(
        Object.entries(options).map(([name, option]) => [
          name,
          {
            type: option.type,
            ...(option.short === undefined ? {} : { short: option.short }),
            ...(option.multiple === true ? { multiple: true } : {}),
          },
        ]),
      ),
    })
  } catch (error) {
    throw new UsageError(parseArgsMessage(error, command), command)
  }
  const values = parsed.values as Values
  if (values['help'] === true) return { action: 'help', command }
  const expected = command.positionals
  if (parsed.positionals.length !== expected.length) {
    const name = commandName(command)
    const message =
      parsed.positionals.length < expected.length
        ? `${name} needs ${expected.join(' ')}`
        : `${name} takes ${expected.length === 0 ? 'no argument' : expected.join(' ')}; unexpected ${JSON.stringify(parsed.positionals[expected.length])}`
    throw new UsageError(message, command)
  }
  for (const [i, value] of parsed.positionals.entries()) {
    const problem = idProblem(value)
    if (problem !== undefined) throw new UsageError(`${expected[i] ?? 'an argument'} ${problem}`, command)
  }
  for (const [name, value] of Object.entries(values)) {
    if (value === '' || (Array.isArray(value) && value.includes(''))) throw new UsageError(`--${name} must not be empty`, command)
    if (options[name]?.id === true && typeof value === 'string') {
      const problem = idProblem(value)
      if (problem !== undefined) throw new UsageError(`--${name} ${problem}`, command)
    }
  }
  return { action: 'run', command, positionals: parsed.positionals, values }
}

/** parseArgs's own messages name the option and say how to pass a positional: ours only name the option. */
function parseArgsMessage(error: unknown, command: CommandSpec): string {
  const code = (error as { code?: unknown }).code
  const message = error instanceof Error ? error.message : String(error)
  // `'--max-items'`, or `'-h, --help'` for an option with a short form: the long one.
  const option = /'(?:-[^-' ]+, )?(-[^' ]+)'/.exec(message)?.[1]
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option !== undefined) return `unknown option ${option} for ${commandName(command)}`
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option !== undefined) {
    if (message.includes('does not take an argument')) return `${option} takes no value`
    // What follows starts with a dash: another option (the value forgotten), or a value such as
    // `-1`, which only `--max-items=-1` passes. Say both.
    if (message.includes('ambiguous')) {
      const value = optionsOf(command)[option.replace(/^-+/, '')]?.value ?? 'VALUE'
      return `${option} needs a value (${option}=${value} for one that starts with "-")`
    }
    return `${option} needs a value`
  }
  return message
}

/**
 * Why `value` cannot be an id (positional ids, `--user-id`, `--agent-id`), in the SDK's rule (a
 * RequestValidationError there): empty, or `.` or `..`, which URL parsers resolve as path
 * segments instead of sending them. Checked here so that it is a usage error.
 */
function idProblem(value: string): string | undefined {
  if (value === '') return 'must not be empty'
  if (value === '.' || value === '..')
    return `cannot be ${JSON.stringify(value)}: URL parsers and proxies resolve it as a path segment instead of sending it as an id`
  return undefined
}

/** `--name N`: a whole number from `min` to `max`, or `undefined` when absent. @throws UsageError */
export function integerOption(values: Values, name: string, min: number, max: number, command: CommandSpec): number | undefined {
  const text = stringOption(values, name)
  if (text === undefined) return undefined
  const n = Number(text)
  if (/^[0-9]+$/.test(text) && Number.isSafeInteger(n) && n >= min && n <= max) return n
  const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`
  throw new UsageError(`--${name} must be a whole number ${range}, not ${JSON.stringify(text)}`, command)
}

/** A string option, or `undefined`. */
export function stringOption(values: Values, name: string): string | undefined {
  const value = values[name]
  return typeof value === 'string' ? value : undefined
}

/** Every value of a repeatable option (`--previous-checkpoint A --previous-checkpoint B`), in order. */
export function listOption(values: Values, name: string): readonly string[] {
  const value = values[name]
  if (typeof value === 'string') return [value]
  return typeof value === 'object' ? value : []
}

/** A required string option. @throws UsageError */
export function requiredOption(values: Values, name: string, command: CommandSpec): string {
  const value = stringOption(values, name)
  if (value === undefined) throw new UsageError(`${commandName(command)} needs --${name}`, command)
  return value
}

/** `--format`, or `undefined` for the default of where stdout goes. @throws UsageError */
export function formatOption(values: Values, command: CommandSpec): Format | undefined {
  const value = stringOption(values, 'format')
  if (value === undefined) return undefined
  if ((FORMATS as readonly string[]).includes(value)) return value as Format
  throw new UsageError(`--format must be ${FORMATS.join(', ')}, not ${JSON.stringify(value)}`, command)
}

/** `--shard I/N`: shard I (from 0) of N, N from 1 to `maxShards`. @throws UsageError */
export function shardOption(values: Values, maxShards: number, command: CommandSpec): { index: number; count: number } | undefined {
  const text = stringOption(values, 'shard')
  if (text === undefined) return undefined
  const match = /^([0-9]+)\/([0-9]+)$/.exec(text)
  const index = Number(match?.[1])
  const count = Number(match?.[2])
  if (match === null || !Number.isSafeInteger(index) || !Number.isSafeInteger(count) || count < 1 || count > maxShards || index >= count) {
    throw new UsageError(
      `--shard must be I/N, shard I (from 0 to N-1) of N shards, N from 1 to ${maxShards}, such as 0/4; not ${JSON.stringify(text)}`,
      command,
    )
  }
  return { index, count }
}

/** `--metadata JSON` (or `--merge-metadata JSON`, as `name`): a JSON object. @throws UsageError */
export function metadataOption(values: Values, command: CommandSpec, name = 'metadata'): Record<string, unknown> | undefined {
  const text = stringOption(values, name)
  if (text === undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`--${name} is not JSON: ${error instanceof Error ? error.message : String(error)}`, command)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(`--${name} must be a JSON object, such as '{"plan":"pro"}'`, command)
  }
  return value as Record<string, unknown>
}

/** Token lifetime units the SDK sends (hours, days): checked here so that a typo is a usage error. */
const EXPIRES_IN = /^[1-9][0-9]{0,5}[hd]$/

/** `--expires-in 12h`. @throws UsageError */
export function expiresInOption(values: Values, command: CommandSpec): `${bigint}h` | `${bigint}d` | undefined {
  const text = stringOption(values, 'expires-in')
  if (text === undefined) return undefined
  if (EXPIRES_IN.test(text)) return text as `${bigint}h` | `${bigint}d`
  throw new UsageError(`--expires-in must be a whole number of hours or days, such as 12h or 7d, not ${JSON.stringify(text)}`, command)
}
