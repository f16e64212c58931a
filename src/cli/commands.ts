/**
 * The commands of `chat-service`, declared as data (API.md, "The `chat-service` command"): each
 * command's words, positional arguments, options and help text. `args.ts` parses a command line
 * against this table; nothing here talks to the service or loads the SDK.
 *
 * @module
 */

/** One option of a command, as `node:util` `parseArgs` takes it, with its help line. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean'
  readonly short?: string
  /** What the value is called in the help text (`N`, `FILE`). Only for `type: 'string'`. */
  readonly value?: string
  /** Whether the command needs it (shown without brackets in the usage line; checked by the command). */
  readonly required?: boolean
  /** Whether it may be given more than once (`--previous-checkpoint A --previous-checkpoint B`). */
  readonly multiple?: boolean
  /** Whether its value is an id, checked as the SDK checks ids (not `.` or `..`). */
  readonly id?: boolean
  readonly help: string
}

/** What a command prints: a list (paged), one result, or nothing on stdout (export). */
export type CommandKind = 'list' | 'single' | 'token' | 'export'

/** One command of the table. */
export interface CommandSpec {
  /** The command's words, e.g. `['users', 'find']`. */
  readonly words: readonly [string, string] | readonly [string]
  /** Names of the positional arguments, in order, all required (`ID`, `CONVERSATION_ID`). */
  readonly positionals: readonly string[]
  readonly summary: string
  /** More text for `--help`, after the options. */
  readonly details?: string
  readonly kind: CommandKind
  /** The command's own options (the common ones are added by kind). */
  readonly options: Readonly<Record<string, OptionSpec>>
}

/** The output formats (`--format`). */
export const FORMATS = ['table', 'json', 'jsonl'] as const
/** One of {@link FORMATS}. */
export type Format = (typeof FORMATS)[number]

const FORMAT_HELP_LIST = 'table, json (one array) or jsonl (one JSON object a line); default: table on a terminal, jsonl otherwise'
const FORMAT_HELP_SINGLE = 'table, json or jsonl; default: table on a terminal, json otherwise'

/** Options every command that talks to the service takes. */
const CONNECTION: Readonly<Record<string, OptionSpec>> = {
  'base-url': { type: 'string', value: 'URL', help: 'the service, overriding CHAT_SERVICE_BASE_URL' },
  'env-file': {
    type: 'string',
    value: 'FILE',
    help: 'read CHAT_SERVICE_* variables from FILE (KEY=value lines); variables already set in the environment win',
  },
  'allow-insecure-http': {
    type: 'boolean',
    help: 'allow plain http to a host that is not loopback, on a trusted network only (the key secret crosses it in clear text; a warning says so)',
  },
}
const HELP: Readonly<Record<string, OptionSpec>> = { help: { type: 'boolean', short: 'h', help: 'show this help' } }

/** The options `kind` adds to a command's own. */
export function commonOptions(kind: CommandKind): Readonly<Record<string, OptionSpec>> {
  switch (kind) {
    case 'list':
      return {
        format: { type: 'string', value: 'FORMAT', help: FORMAT_HELP_LIST },
        'max-items': { type: 'string', value: 'N', help: 'stop after N items (and send no further request); default: all of them' },
        ...CONNECTION,
        ...HELP,
      }
    case 'single':
    case 'token':
      return { format: { type: 'string', value: 'FORMAT', help: FORMAT_HELP_SINGLE }, ...CONNECTION, ...HELP }
    case 'export':
      return {
        'max-items': { type: 'string', value: 'N', help: 'stop after N messages, resumable like Ctrl-C (the next run goes on)' },
        ...CONNECTION,
        ...HELP,
      }
  }
}

/** Every command, in the order of the general help. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    words: ['agents', 'list'],
    positionals: [],
    summary: "List the company's agents (GET /rest/v1/agents), every page.",
    kind: 'list',
    options: { active: { type: 'boolean', help: 'only agents whose `active` is true (the ones to bind a token to)' } },
  },
  {
    words: ['users', 'find'],
    positionals: [],
    summary: 'Find the one customer user whose external_id is exactly ID.',
    details:
      'Exit status 1, with a message on stderr and nothing on stdout, when no customer user has this\n' +
      'external_id, or when several have it (the service does not say that external ids are unique).',
    kind: 'single',
    options: { 'external-id': { type: 'string', value: 'ID', required: true, help: "the calling system's own user id (required)" } },
  },
  {
    words: ['users', 'list'],
    positionals: [],
    summary: 'List customer users (GET /rest/v1/customer-users), every page, optionally filtered.',
    details: 'How the service matches --name and --email (exactly or partly) is not specified.',
    kind: 'list',
    options: {
      name: { type: 'string', value: 'N', help: 'filter by name' },
      email: { type: 'string', value: 'E', help: 'filter by e-mail address' },
      'external-id': { type: 'string', value: 'ID', help: 'filter by external_id (use `users find` for the one user)' },
    },
  },
  {
    words: ['users', 'update'],
    positionals: ['ID'],
    summary: 'Update the customer user whose internal id is ID (PUT /rest/v1/customer-users/ID).',
    details: `Only the fields given are sent.

--metadata JSON REPLACES the metadata: the object is sent as given, and the service (the fake
does, the spec does not say) may drop every key it does not name. Give the whole object.

--merge-metadata JSON MERGES: its top-level keys are set in the stored metadata and the other keys
kept (a key given as null becomes null; a nested object replaces the stored one whole). It reads the user's
metadata, then writes it back (the SDK's customerUsers.updateMetadata, found by the user's
external_id): the command first pages through the users to find ID's external_id (one request
per 100 users before it), so it costs a few requests more, and it is not atomic: a change made
by someone else between the read and the write is lost. It goes alone: not with --metadata,
--name or --email.`,
    kind: 'single',
    options: {
      name: { type: 'string', value: 'N', help: 'new display name' },
      email: { type: 'string', value: 'E', help: 'new e-mail address' },
      metadata: { type: 'string', value: 'JSON', help: 'REPLACE the metadata with this JSON object, e.g. \'{"plan":"pro","version":2}\'' },
      'merge-metadata': {
        type: 'string',
        value: 'JSON',
        help: 'MERGE the top-level keys of this JSON object into the stored metadata, keeping the others',
      },
    },
  },
  {
    words: ['token', 'issue'],
    positionals: [],
    summary: 'Issue a signed chat token for an end user (POST /rest/v1/auth/token).',
    details:
      'On a terminal it prints the user, the agent and the expiry, not the token (a token in the\n' +
      'scrollback is a secret anyone at the screen can copy): pipe it (`TOKEN=$(chat-service token issue\n' +
      '--user-id u-42)`) or pass --show-token. Piped, the default output is the token alone on one line;\n' +
      '--format json or jsonl gives { token, user, agent, expiresIn }.',
    kind: 'token',
    options: {
      'user-id': { type: 'string', value: 'ID', required: true, id: true, help: "the calling system's id of the end user (required)" },
      'agent-id': { type: 'string', value: 'ID', id: true, help: 'the agent to bind the token to (see `agents list --active`)' },
      'expires-in': { type: 'string', value: 'DURATION', help: 'lifetime: whole hours or days, e.g. 12h or 7d (default 24h)' },
      'show-token': { type: 'boolean', help: 'print the token on a terminal too' },
    },
  },
  {
    words: ['conversations', 'list'],
    positionals: [],
    summary: "List the company's conversations (GET /rest/v1/conversations), every page.",
    kind: 'list',
    options: {},
  },
  {
    words: ['messages', 'list'],
    positionals: ['CONVERSATION_ID'],
    summary: 'List the messages of one conversation, oldest first, every page.',
    kind: 'list',
    options: {},
  },
  {
    words: ['export'],
    positionals: [],
    summary: 'Write every message of the company to FILE as JSON Lines; resumable; with --checkpoint, only what is new.',
    details: `Lines are messages as the service sends them, one JSON object a line, conversation after
conversation (each conversation's messages oldest first). Progress goes to stderr: a bar with rate
and ETA on a terminal, a plain line every 5 s otherwise.

Without --checkpoint: a full export into FILE. Where it stands is saved in FILE.cursor about once a
second, after the lines before it are on disk; after Ctrl-C, SIGTERM, a crash or a failure (a
full disk included: make room first), the same command appends from there with no gap and no
duplicate line. A finished export deletes FILE.cursor, so the next run starts a new export (and
overwrites FILE).

With --checkpoint CFILE: the nightly job. The first run writes every message and saves CFILE; each
later run APPENDS to FILE only the messages added since CFILE (FILE may be a new file each night),
then updates CFILE. Interrupted, the same command resumes (with the same FILE). A conversation whose
stored messages no longer match CFILE (a message deleted) is read again from its first message,
so its messages may repeat: de-duplicate by message id downstream if that matters.

--out - writes to stdout, and a FILE that is not a regular file (/dev/stdout, a FIFO) is written
the same way: NOT resumable. Nothing is saved while it runs: an interrupted full export starts
over, and with --checkpoint, CFILE is updated only when the run finishes, so the next run sends an
interrupted run's messages again. A reader that goes away (| head) ends the export quietly.

--shard I/N exports only the conversations of shard I (0 to N-1) of N, so that N workers share one
export; their files together hold every message once. Give each shard its own FILE (and CFILE). To
change N, give each shard of the new count a new CFILE, and the first night also every CFILE of
the previous count with --previous-checkpoint (once each); they are merged as listNew merges an
array of checkpoints.

The state files record the service (base URL and key id, never the secret): a file of another
service or company is refused, and nothing is changed. So is a file of another shard, or one this
command did not write. A lock (FILE.cursor.lock, CFILE.lock) keeps a second export off the same
files: exit 1, naming the one that runs (and whether it is stopped, Ctrl-Z).

Exit status: 0 done (or stopped by --max-items, or stdout's reader gone), 1 failure (resumable),
2 usage, 130 Ctrl-C, 143 SIGTERM.`,
    kind: 'export',
    options: {
      out: {
        type: 'string',
        value: 'FILE',
        required: true,
        help: 'the JSON Lines file to write (required); - for stdout, not resumable (see below)',
      },
      checkpoint: {
        type: 'string',
        value: 'CFILE',
        help: 'only what is new since CFILE, which is then updated (created on the first run)',
      },
      'previous-checkpoint': {
        type: 'string',
        value: 'FILE',
        multiple: true,
        help: "a new shard count: the previous run's checkpoint files to start a new CFILE from (repeat: one for each shard)",
      },
      shard: {
        type: 'string',
        value: 'I/N',
        help: 'only the conversations of shard I of N (I from 0, as Kubernetes JOB_COMPLETION_INDEX)',
      },
      concurrency: { type: 'string', value: 'N', help: 'requests in flight, 1 to 64 (default 8)' },
    },
  },
]

/** Flags that would carry credentials: refused, and their values never echoed. */
export const CREDENTIAL_FLAG = /^--?(?:key[-_]?(?:id|secret)|secret|api[-_]?key)(?:=|$)/i

/** The full name of a command (`users find`). */
export function commandName(spec: CommandSpec): string {
  return spec.words.join(' ')
}

/** The option names a command takes, its own first, then the common ones. */
export function optionsOf(spec: CommandSpec): Readonly<Record<string, OptionSpec>> {
  return { ...spec.options, ...commonOptions(spec.kind) }
}

function optionLines(options: Readonly<Record<string, OptionSpec>>): string {
  const heads = Object.entries(options).map(([name, option]) => {
    const short = option.short === undefined ? '    ' : `-${option.short}, `
    return [`  ${short}--${name}${option.value === undefined ? '' : ` ${option.value}`}`, option.help] as const
  })
  const width = Math.max(...heads.map(([head]) => head.length)) + 2
  return heads.map(([head, help]) => `${head.padEnd(width)}${help}`).join('\n')
}

/** `--help` of one command. */
export function commandHelp(spec: CommandSpec): string {
  const positionals = spec.positionals.map((name) => ` ${name}`).join('')
  const own = Object.entries(spec.options)
    .map(([name, option]) => {
      const text = option.value === undefined ? `--${name}` : `--${name} ${option.value}`
      return option.required === true ? ` ${text}` : ` [${text}]${option.multiple === true ? '...' : ''}`
    })
    .join('')
  const text = [
    `Usage: chat-service ${commandName(spec)}${positionals}${own} [options]`,
    '',
    spec.summary,
    '',
    'Options:',
    optionLines(optionsOf(spec)),
  ]
  if (spec.details !== undefined) text.push('', spec.details)
  text.push('', ENVIRONMENT)
  return `${text.join('\n')}\n`
}

const ENVIRONMENT = `Environment:
  CHAT_SERVICE_BASE_URL, CHAT_SERVICE_KEY_ID, CHAT_SERVICE_KEY_SECRET   the service and the API key pair
  CHAT_SERVICE_LOG   the SDK's log level on stderr: off, error, warn (default), info, debug
  CHAT_SERVICE_ALLOW_INSECURE_HTTP=1   as --allow-insecure-http
A variable set in the environment wins over --env-file; errors that may come from a setting (a
refused connection, a 401) say where each one came from.
Credentials come from the environment only, never from a flag: a flag's value stays in the shell's
history and is shown by \`ps\` to every user of the machine.`

/** `chat-service --help`. */
export function generalHelp(version: string): string {
  const width = Math.max(...COMMANDS.map((spec) => commandName(spec).length)) + 4
  const lines = COMMANDS.map((spec) => `  ${commandName(spec).padEnd(width)}${spec.summary}`)
  return `chat-service ${version}: the Chat Service management API from a terminal, a cron line or a CI step.

Usage: chat-service COMMAND [arguments] [options]

Commands:
${lines.join('\n')}

Common options:
  --format table|json|jsonl   output format (lists: table on a terminal, jsonl otherwise)
  --max-items N               stop a list after N items
  --base-url URL              the service, overriding CHAT_SERVICE_BASE_URL
  --env-file FILE             read CHAT_SERVICE_* variables from FILE
  --allow-insecure-http       allow plain http to a host that is not loopback (a trusted network only)
  -h, --help                  help of a command: chat-service users find --help
  --version                   the version

Data goes to stdout, progress and messages to stderr. Exit status: 0 ok, 1 failure, 2 usage
(an unknown command or option), 9 --env-file FILE not found (Node.js's check), 130 interrupted
(Ctrl-C), 143 terminated (SIGTERM).

${ENVIRONMENT}
`
}
