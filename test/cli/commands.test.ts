// `chat-service`, the package's second bin, as a user runs it: installed from the packed tarball,
// run as a child process against the fake service in listen mode. Every command and format,
// piping, --max-items, terminals, exit statuses and messages, and never a secret in the output.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFakeChatService, generateDataset, type FakeChatService, type FakeServerHandle } from 'chat-service-sdk/testing'
import {
  expectNoSecret,
  installPacked,
  jsonLines,
  poll,
  runCli,
  runOnTerminal,
  serviceEnv,
  shellQuote,
  startCli,
  type Installed,
  type Ran,
  type RunOptions,
} from './helpers.ts'

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string
  scripts: Record<string, string>
}
const VERSION = PACKAGE.version
const DATASET = { seed: 11, agents: 5, customerUsers: 250, conversations: 30, messages: 600 }

let installed: Installed
let fake: FakeChatService
let server: FakeServerHandle
let env: Record<string, string>
let company: string
/** Secrets no run may print: the key secret, and (added as they are issued) tokens shown nowhere they should not be. */
let keySecret: string

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

/** Runs the command with the service's environment (and `extra`), checking that the key secret is printed nowhere. */
async function cli(args: readonly string[], options: RunOptions = {}): Promise<Ran> {
  const ran = await runCli(installed, args, { ...options, env: { ...env, ...options.env } })
  expectNoSecret(ran, [keySecret])
  return ran
}

/** The paths of the list requests the fake saw since `from`, as `path?query`. */
function requestsSince(from: number): string[] {
  return fake.requests.slice(from).map((request) => `${request.method} ${request.rawPath}`)
}

describe('the package ships the command', () => {
  it('as package.json bin, a file with a node shebang, without the ESM build or types made beside it', () => {
    expect(installed.bin.endsWith('/dist/cli/index.cjs')).toBe(true)
    expect(installed.files.filter((file) => file.startsWith('dist/cli/') && !file.endsWith('.map'))).toEqual(['dist/cli/index.cjs'])
    expect(readFileSync(installed.bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
  })

  it("takes its version from the SDK's VERSION: the bin holds no copy of package.json (its devDependencies, its scripts)", () => {
    const code = readFileSync(installed.bin, 'utf8')
    expect(code).not.toContain('devDependencies')
    // The scripts' command lines (one-word ones, such as `tsup`, are names the code may mention).
    const commandLines = Object.values(PACKAGE.scripts).filter((script) => script.includes(' '))
    expect(commandLines.filter((script) => code.includes(script))).toEqual([])
  })

  it('runs as an executable (its shebang finds node on PATH): --version prints the package version', async () => {
    const child = spawn(installed.bin, ['--version'], { cwd: installed.dir, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    const [code] = (await once(child, 'close')) as [number]
    expect({ code, stdout }).toEqual({ code: 0, stdout: `chat-service ${VERSION}\n` })
  })
})

describe('start-up', () => {
  // The bin turns Node.js's compile cache on itself, in os.tmpdir() (TMPDIR): NODE_COMPILE_CACHE
  // would turn it on without the bin (vitest.config.ts sets it for every process of the tests), so
  // these tests unset it and set TMPDIR.
  it("a command leaves Node.js's compiled code of what it loaded (the SDK, undici, zod) in os.tmpdir(), for the next run", async () => {
    const tmp = join(installed.dir, 'tmp')
    mkdirSync(tmp)
    const ran = await cli(['agents', 'list', '--format', 'jsonl', '--max-items', '1'], {
      env: { TMPDIR: tmp, NODE_COMPILE_CACHE: undefined },
    })
    expect(ran.code).toBe(0)
    expect(readdirSync(join(tmp, 'node-compile-cache'), { recursive: true }).length).toBeGreaterThan(0)
  })

  it('a compile cache that cannot be written (TMPDIR names a file, as a read-only file system would refuse it) costs the cache only: the command runs, nothing said', async () => {
    const tmp = join(installed.dir, 'not-a-directory')
    writeFileSync(tmp, '')
    const ran = await cli(['agents', 'list', '--format', 'jsonl', '--max-items', '1'], {
      env: { TMPDIR: tmp, NODE_COMPILE_CACHE: undefined },
    })
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' })
    expect(jsonLines(ran.stdout)).toHaveLength(1)
  })
})

describe('help', () => {
  it('--help lists every command, on stdout, exit 0', async () => {
    const ran = await cli(['--help'])
    expect(ran.code).toBe(0)
    for (const command of [
      'agents list',
      'users find',
      'users list',
      'users update',
      'token issue',
      'conversations list',
      'messages list',
      'export',
    ]) {
      expect(ran.stdout).toContain(`  ${command} `)
    }
    expect(ran.stderr).toBe('')
  })

  it.each(['agents list', 'users find', 'users list', 'users update', 'token issue', 'conversations list', 'messages list', 'export'])(
    '%s --help: its usage and options, exit 0, nothing sent',
    async (command) => {
      const sent = fake.requests.length
      const ran = await cli([...command.split(' '), '--help'])
      expect(ran.code).toBe(0)
      expect(ran.stdout).toContain(`Usage: chat-service ${command}`)
      expect(ran.stdout).toContain('--base-url URL')
      expect(fake.requests.length).toBe(sent)
    },
  )
})

describe('lists', () => {
  it('piped, every agent as JSON Lines (one object a line), as the service sent it', async () => {
    const ran = await cli(['agents', 'list'])
    expect(ran.code).toBe(0)
    expect(jsonLines(ran.stdout)).toEqual(fake.listAgents(company))
    expect(ran.stderr).toBe('')
  })

  it('--format json is one array; --format jsonl and table are what they say', async () => {
    const json = await cli(['agents', 'list', '--format', 'json'])
    expect(JSON.parse(json.stdout)).toEqual(fake.listAgents(company))
    const empty = await cli(['agents', 'list', '--format', 'json', '--active', '--max-items', '1', '--base-url', `${server.url}/rest/v1`])
    expect(JSON.parse(empty.stdout)).toHaveLength(1)
    const table = await cli(['agents', 'list', '--format', 'table'])
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^id\s+name\s+active\s+updated_at$/)
    expect(lines).toHaveLength(1 + DATASET.agents)
    const agent = fake.listAgents(company)[0]
    expect(lines[1]).toMatch(new RegExp(`^${agent?.id}\\s+${agent?.name}\\s+${agent?.active}\\s+${agent?.updated_at}$`))
  })

  it('agents list --active: only the active agents', async () => {
    const ran = await cli(['agents', 'list', '--active'])
    const active = fake.listAgents(company).filter((agent) => agent.active)
    expect(active.length).toBeLessThan(DATASET.agents)
    expect(jsonLines(ran.stdout)).toEqual(active)
  })

  it('pages through everything at 100 a page', async () => {
    const from = fake.requests.length
    const ran = await cli(['users', 'list'])
    expect(jsonLines(ran.stdout).map((user) => (user as { id: string }).id)).toEqual(fake.listCustomerUsers(company).map((user) => user.id))
    expect(requestsSince(from)).toEqual([
      'GET /rest/v1/customer-users?limit=100&page=1',
      'GET /rest/v1/customer-users?limit=100&page=2',
      'GET /rest/v1/customer-users?limit=100&page=3',
    ])
  })

  it('--max-items N: N items, and it asks for no more than that', async () => {
    let from = fake.requests.length
    const five = await cli(['users', 'list', '--max-items', '5'])
    expect(jsonLines(five.stdout)).toHaveLength(5)
    expect(requestsSince(from)).toEqual(['GET /rest/v1/customer-users?limit=5&page=1'])
    from = fake.requests.length
    const many = await cli(['users', 'list', '--max-items', '150'])
    expect(jsonLines(many.stdout)).toHaveLength(150)
    expect(requestsSince(from)).toEqual(['GET /rest/v1/customer-users?limit=100&page=1', 'GET /rest/v1/customer-users?limit=100&page=2'])
  })

  it('users list filters travel in the body', async () => {
    const [user] = fake.listCustomerUsers(company)
    const from = fake.requests.length
    const ran = await cli(['users', 'list', '--external-id', user?.external_id ?? '', '--name', user?.name ?? ''])
    expect(jsonLines(ran.stdout)).toEqual([expect.objectContaining({ id: user?.id })])
    expect(fake.requests[from]?.body).toMatchObject({ external_id: user?.external_id, name: user?.name })
  })

  it('conversations list and messages list CONVERSATION_ID: every one, in order', async () => {
    const conversations = await cli(['conversations', 'list'])
    expect(jsonLines(conversations.stdout)).toEqual(fake.listConversations(company))
    const conversation = fake.listConversations(company).find((candidate) => candidate.message_count > 0)
    const messages = await cli(['messages', 'list', conversation?.id ?? ''])
    expect(jsonLines(messages.stdout)).toEqual(fake.listMessages(company, conversation?.id ?? ''))
  })

  it('piped into a reader that stops early (`| head -n 1`): exit 0, no error', async () => {
    const command = [process.execPath, installed.bin, 'users', 'list'].map(shellQuote).join(' ')
    const child = spawn('bash', ['-o', 'pipefail', '-c', `${command} | head -n 1`], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const [code] = (await once(child, 'close')) as [number]
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(jsonLines(stdout)).toHaveLength(1)
  })

  it('on a terminal: a table, text from the service made harmless (no escape sequence reaches the terminal)', async () => {
    const conversation = fake.listConversations(company)[0]
    fake.appendMessages(company, conversation?.id ?? '', [{ role: 'user', content: 'red \u001b[31malert\u001b[0m\nsecond line' }])
    const { code, screen } = await runOnTerminal(installed, ['messages', 'list', conversation?.id ?? ''], { env })
    expect(code).toBe(0)
    expect(screen).toMatch(/^created_at\s+id\s+role\s+content\n/)
    expect(screen).toContain('red \\u001b[31malert\\u001b[0m\\nsecond line')
    expect(screen).not.toContain('\u001b[31m')
    expectNoSecret({ screen }, [keySecret])
  })
})

describe('users find and users update', () => {
  it('users find --external-id: the user as JSON when piped', async () => {
    const user = fake.listCustomerUsers(company)[7]
    const ran = await cli(['users', 'find', '--external-id', user?.external_id ?? ''])
    expect(ran.code).toBe(0)
    expect(JSON.parse(ran.stdout)).toEqual(expect.objectContaining({ id: user?.id, external_id: user?.external_id }))
  })

  it('users find with an external id nobody has: exit 1, nothing on stdout, why on stderr', async () => {
    const ran = await cli(['users', 'find', '--external-id', 'nobody-has-this'])
    expect(ran).toMatchObject({ code: 1, stdout: '' })
    expect(ran.stderr).toBe('chat-service: no customer user has the external_id "nobody-has-this"\n')
  })

  it('users update ID: sends only the fields given, prints the updated user', async () => {
    const user = fake.listCustomerUsers(company)[3]
    const from = fake.requests.length
    const ran = await cli(['users', 'update', user?.id ?? '', '--metadata', '{"plan":"pro","version":2}', '--format', 'jsonl'])
    expect(ran.code).toBe(0)
    expect(jsonLines(ran.stdout)).toEqual([expect.objectContaining({ id: user?.id, metadata: { plan: 'pro', version: 2 } })])
    expect(fake.requests[from]?.body).toEqual({ keyId: env['CHAT_SERVICE_KEY_ID'], keySecret, metadata: { plan: 'pro', version: 2 } })
    expect(fake.getCustomerUser(company, user?.id ?? '')?.metadata).toEqual({ plan: 'pro', version: 2 })
  })

  it('users update ID --merge-metadata JSON: its top-level keys set in the stored metadata, the others kept (the SDK updateMetadata: read, then write)', async () => {
    const user = fake.listCustomerUsers(company)[120]
    const id = user?.id ?? ''
    const stored = { locale: 'fr', preferences: { tone: 'formal' }, plan: 'free' }
    expect((await cli(['users', 'update', id, '--metadata', JSON.stringify(stored)])).code).toBe(0)
    const from = fake.requests.length
    const ran = await cli(['users', 'update', id, '--merge-metadata', '{"plan":"pro","version":2}', '--format', 'json'])
    expect(ran.code, ran.stderr).toBe(0)
    const merged = { locale: 'fr', preferences: { tone: 'formal' }, plan: 'pro', version: 2 }
    expect(fake.getCustomerUser(company, id)?.metadata).toEqual(merged)
    expect(JSON.parse(ran.stdout)).toEqual(expect.objectContaining({ id, metadata: merged }))
    // Its external_id found by paging to it, its metadata read by external_id, then one PUT of the merged object.
    expect(requestsSince(from)).toEqual([
      'GET /rest/v1/customer-users?limit=100&page=1',
      'GET /rest/v1/customer-users?limit=100&page=2',
      'GET /rest/v1/customer-users?limit=100&page=1',
      `PUT /rest/v1/customer-users/${id}`,
    ])
    expect(fake.requests[from + 2]?.body).toMatchObject({ external_id: user?.external_id })
    expect(fake.requests.at(-1)?.body).toMatchObject({ metadata: merged })
  })

  it('users update ID --metadata replaces the whole metadata, and the help says which flag does which', async () => {
    const id = fake.listCustomerUsers(company)[121]?.id ?? ''
    await cli(['users', 'update', id, '--metadata', '{"locale":"fr","plan":"free"}'])
    expect((await cli(['users', 'update', id, '--metadata', '{"plan":"pro"}'])).code).toBe(0)
    expect(fake.getCustomerUser(company, id)?.metadata).toEqual({ plan: 'pro' })
    const help = await cli(['users', 'update', '--help'])
    expect(help.stdout).toMatch(/--metadata JSON\s+REPLACE the metadata/)
    expect(help.stdout).toMatch(/--merge-metadata JSON\s+MERGE the top-level keys/)
  })

  it('users update --merge-metadata of an id nobody has: exit 1, nothing written', async () => {
    const from = fake.requests.length
    const ran = await cli(['users', 'update', 'cu_nobody', '--merge-metadata', '{"plan":"pro"}'])
    expect(ran).toMatchObject({ code: 1, stdout: '', stderr: 'chat-service: no customer user has the id "cu_nobody"\n' })
    expect(requestsSince(from).every((request) => request.startsWith('GET '))).toBe(true)
  })

  it.each([
    [['--metadata', '{nope'], '--metadata is not JSON'],
    [['--metadata', '[1]'], '--metadata must be a JSON object'],
    [['--merge-metadata', '"x"'], '--merge-metadata must be a JSON object'],
    [
      ['--metadata', '{}', '--merge-metadata', '{}'],
      '--metadata replaces the metadata and --merge-metadata merges into it: give one of them',
    ],
    [['--name', 'N', '--merge-metadata', '{}'], '--merge-metadata goes alone'],
    [[], 'users update needs at least one of --name, --email, --metadata, --merge-metadata'],
  ])('users update %j: exit 2, %s, nothing sent', async (flags, message) => {
    const sent = fake.requests.length
    const ran = await cli(['users', 'update', 'cu_00001', ...flags])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain(`chat-service: ${message}`)
    expect(ran.stderr).toContain('Usage: chat-service users update ID')
    expect(fake.requests.length).toBe(sent)
  })
})

describe('token issue', () => {
  it('piped: the token alone on one line, for TOKEN=$(chat-service token issue ...)', async () => {
    const [agent] = fake.listAgents(company).filter((candidate) => candidate.active)
    const ran = await cli(['token', 'issue', '--user-id', 'u-cli-1', '--agent-id', agent?.id ?? '', '--expires-in', '12h'])
    expect(ran.code).toBe(0)
    expect(ran.stdout).toMatch(/^[^\s]+\n$/)
    const token = ran.stdout.trim()
    expect(fake.verifyToken(token)).toMatchObject({ valid: true })
    expect(fake.requests.at(-1)?.body).toMatchObject({ userId: 'u-cli-1', agentId: agent?.id, expiresIn: '12h' })
    expect(ran.stderr.includes(token)).toBe(false)
  })

  it('--format json: { token, user, agent, expiresIn }', async () => {
    const ran = await cli(['token', 'issue', '--user-id', 'u-cli-2', '--format', 'json'])
    const result = JSON.parse(ran.stdout) as { token: string; user: { externalId: string }; expiresIn: string }
    expect(result).toMatchObject({ user: { externalId: 'u-cli-2' }, expiresIn: '24h' })
    expect(fake.verifyToken(result.token)).toMatchObject({ valid: true })
  })

  it('on a terminal: the user, the agent and the expiry, not the token; --show-token shows it', async () => {
    const [agent] = fake.listAgents(company).filter((candidate) => candidate.active)
    const hidden = await runOnTerminal(
      installed,
      ['token', 'issue', '--user-id', 'u-cli-3', '--agent-id', agent?.id ?? '', '--expires-in', '2d'],
      { env },
    )
    expect(hidden.code).toBe(0)
    expect(hidden.screen).toMatch(/user\.externalId\s+u-cli-3/)
    expect(hidden.screen).toContain(`${agent?.name} (${agent?.id}), active`)
    expect(hidden.screen).toMatch(/expires\s+in 2d, about \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/)
    expect(hidden.screen).toContain('the token is not shown on a terminal')
    expect(hidden.screen).not.toMatch(/eyJ|token\s+\S{20,}/)
    expectNoSecret(hidden, [keySecret])

    const shown = await runOnTerminal(installed, ['token', 'issue', '--user-id', 'u-cli-3', '--show-token'], { env })
    const token = /^token\s+(\S+)$/m.exec(shown.screen)?.[1] ?? ''
    expect(fake.verifyToken(token)).toMatchObject({ valid: true })
  })

  it('--expires-in that the SDK would not send: exit 2, nothing sent', async () => {
    const sent = fake.requests.length
    const ran = await cli(['token', 'issue', '--user-id', 'u', '--expires-in', '90m'])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain('--expires-in must be a whole number of hours or days')
    expect(fake.requests.length).toBe(sent)
  })
})

describe('failures: exit status and message', () => {
  it('a missing variable: exit 1, which one and where to set it, nothing sent', async () => {
    const sent = fake.requests.length
    const ran = await cli(['agents', 'list'], { env: { CHAT_SERVICE_KEY_SECRET: undefined } })
    expect(ran).toMatchObject({ code: 1, stdout: '' })
    expect(ran.stderr).toBe(
      'chat-service: CHAT_SERVICE_KEY_SECRET is not set: set it in the environment or in a file given with --env-file FILE; the key pair is never read from a flag\n',
    )
    expect(fake.requests.length).toBe(sent)
  })

  it('a 401: exit 1, the SDK message (status, request, request id), no secret', async () => {
    const ran = await cli(['conversations', 'list'], { env: { CHAT_SERVICE_KEY_SECRET: 'sk_wrong_0123456789abcdef' } })
    expect(ran).toMatchObject({ code: 1, stdout: '' })
    expect(ran.stderr).toMatch(
      /^chat-service: 401 Unauthorized: GET \/rest\/v1\/conversations\?limit=100&page=1 \(request id req_[0-9a-f]+\)/,
    )
    expectNoSecret(ran, ['sk_wrong_0123456789abcdef'])
  })

  it('a 404: exit 1 with the SDK message', async () => {
    const ran = await cli(['messages', 'list', 'conv_nope'])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toMatch(/^chat-service: 404 Not Found: GET \/rest\/v1\/conversations\/conv_nope\/messages/)
  })

  it.each([
    [['agents', 'list', '--bogus'], 'unknown option --bogus for agents list', 'Usage: chat-service agents list'],
    [['agent', 'list'], 'unknown command "agent"', 'Commands:'],
    [['users'], 'users needs a subcommand: users find, users list, users update', 'Commands:'],
    [[], 'a command is required', 'Commands:'],
    [['messages', 'list'], 'messages list needs CONVERSATION_ID', 'Usage: chat-service messages list CONVERSATION_ID'],
    [['agents', 'list', '--format', 'xml'], '--format must be table, json, jsonl, not "xml"', 'Usage: chat-service agents list'],
    [['agents', 'list', '--max-items', '0'], '--max-items must be a whole number 1 or more, not "0"', 'Usage: chat-service agents list'],
    [['users', 'find'], 'users find needs --external-id', 'Usage: chat-service users find'],
    [
      ['export', '--out', 'x.jsonl', '--concurrency', '100'],
      '--concurrency must be a whole number from 1 to 64, not "100"',
      'Usage: chat-service export',
    ],
    [
      ['export', '--out', 'x.jsonl', '--concurrency', '65'],
      '--concurrency must be a whole number from 1 to 64, not "65"',
      'Usage: chat-service export',
    ],
    [
      ['export', '--out', 'x.jsonl', '--previous-checkpoint', 'a.json'],
      '--previous-checkpoint needs --checkpoint CFILE',
      'Usage: chat-service export',
    ],
    [['users', 'update', '..', '--name', 'N'], 'ID cannot be ".."', 'Usage: chat-service users update ID'],
    [['messages', 'list', '.'], 'CONVERSATION_ID cannot be "."', 'Usage: chat-service messages list CONVERSATION_ID'],
    [['token', 'issue', '--user-id', '..'], '--user-id cannot be ".."', 'Usage: chat-service token issue'],
  ])('%j: exit 2, the problem and the help on stderr, nothing sent', async (args, message, help) => {
    const sent = fake.requests.length
    const ran = await cli(args)
    expect(ran).toMatchObject({ code: 2, stdout: '' })
    expect(ran.stderr.startsWith(`chat-service: ${message}`), ran.stderr).toBe(true)
    expect(ran.stderr).toContain(help)
    expect(fake.requests.length).toBe(sent)
  })

  it.each([
    ['--key-secret', 'sk_typed_on_the_command_line'],
    ['--key-secret=sk_typed_on_the_command_line'],
    ['--keyId', 'key_1'],
    ['--api-key=sk_typed_on_the_command_line'],
  ])('a credential flag (%s) is refused with why, its value never repeated', async (...flag) => {
    const ran = await cli(['agents', 'list', ...flag])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toMatch(
      /^chat-service: --[a-zA-Z-]+ is refused: the key pair comes from CHAT_SERVICE_KEY_ID and CHAT_SERVICE_KEY_SECRET only/,
    )
    expect(ran.stderr).toContain('shell history')
    expectNoSecret(ran, ['sk_typed_on_the_command_line'])
  })

  it("a credential flag after leading common options: the help shown is still the command's", async () => {
    const ran = await cli(['--max-items', '1', 'users', 'list', '--key-secret=sk_typed_on_the_command_line'])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain('Usage: chat-service users list')
    expectNoSecret(ran, ['sk_typed_on_the_command_line'])
  })

  it('Ctrl-C (SIGINT) while a page is awaited: exit 130', async () => {
    fake.failNext(1, { delayMs: 60_000, match: { method: 'GET', path: '/rest/v1/conversations' } })
    const sent = fake.requests.length
    const running = startCli(installed, ['conversations', 'list'], { env })
    await poll(() => fake.requests.length > sent)
    running.child.kill('SIGINT')
    const ran = await running.exit
    fake.clearFaults()
    expect(ran).toMatchObject({ code: 130, stdout: '' })
    expectNoSecret(ran, [keySecret])
  })
})

describe('where the configuration comes from', () => {
  it('--env-file FILE: CHAT_SERVICE_* from the file; a variable set in the environment wins', async () => {
    const file = join(installed.dir, 'service.env')
    writeFileSync(
      file,
      `# the service\nCHAT_SERVICE_BASE_URL=${env['CHAT_SERVICE_BASE_URL']}\nCHAT_SERVICE_KEY_ID=${env['CHAT_SERVICE_KEY_ID']}\nCHAT_SERVICE_KEY_SECRET="${keySecret}"\n`,
    )
    const fromFile = await cli(['agents', 'list', '--env-file', file], {
      env: { CHAT_SERVICE_BASE_URL: undefined, CHAT_SERVICE_KEY_ID: undefined, CHAT_SERVICE_KEY_SECRET: undefined },
    })
    expect(fromFile.code).toBe(0)
    expect(jsonLines(fromFile.stdout)).toHaveLength(DATASET.agents)
    const overridden = await cli(['agents', 'list', '--env-file', file], {
      env: { CHAT_SERVICE_KEY_SECRET: 'sk_from_the_environment_123' },
    })
    expect(overridden.code).toBe(1)
    expect(overridden.stderr).toContain('401')
    // Node.js itself checks that a file named by --env-file exists, even after a script's path
    // and parses (nodejs/node#54232): a missing file ends the process with Node's own message and status 9.
    const missing = await cli(['agents', 'list', '--env-file', join(installed.dir, 'nope.env')])
    expect(missing.code).not.toBe(0)
    expect(missing.stdout).toBe('')
    expect(missing.stderr).toContain(`${join(installed.dir, 'nope.env')}: not found`)
  })

  it('the common options may also stand before the command, as in gh or aws; one the command does not take is still refused', async () => {
    const file = join(installed.dir, 'leading.env')
    writeFileSync(
      file,
      `CHAT_SERVICE_BASE_URL=${env['CHAT_SERVICE_BASE_URL']}\nCHAT_SERVICE_KEY_ID=${env['CHAT_SERVICE_KEY_ID']}\nCHAT_SERVICE_KEY_SECRET=${keySecret}\n`,
    )
    const unset = { CHAT_SERVICE_BASE_URL: undefined, CHAT_SERVICE_KEY_ID: undefined, CHAT_SERVICE_KEY_SECRET: undefined }
    const ran = await cli(['--env-file', file, '--format=json', '--max-items', '2', 'agents', 'list'], { env: unset })
    expect(ran).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(ran.stdout)).toHaveLength(2)
    // Read as if typed right after the command's words: one typed after them wins, and `--` still ends the options.
    const overridden = await cli(['--format', 'json', 'agents', 'list', '--format', 'jsonl'])
    expect(jsonLines(overridden.stdout)).toHaveLength(DATASET.agents)
    const conversationId = fake.listConversations(company)[0]?.id ?? ''
    const afterDashes = await cli(['--format', 'json', '--max-items', '1', 'messages', 'list', '--', conversationId])
    expect(afterDashes.code).toBe(0)
    expect(JSON.parse(afterDashes.stdout)).toHaveLength(1)
    expect((await cli(['--env-file', file])).stderr).toContain('a command is required')
    const refused = await cli(['--max-items', '2', 'token', 'issue', '--user-id', 'u-1'])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/max-items/)
    expect(refused.stdout).toBe('')
    expectNoSecret(ran, [keySecret])
  })

  it('--base-url overrides CHAT_SERVICE_BASE_URL', async () => {
    const ran = await cli(['agents', 'list', '--base-url', server.url], { env: { CHAT_SERVICE_BASE_URL: 'http://127.0.0.1:9/rest/v1' } })
    expect(ran.code).toBe(0)
    expect(jsonLines(ran.stdout)).toHaveLength(DATASET.agents)
  })

  it('a stale exported CHAT_SERVICE_BASE_URL that beats --env-file: the connection error says where each setting came from', async () => {
    const envFile = join(installed.dir, 'stale.env')
    writeFileSync(
      envFile,
      `CHAT_SERVICE_BASE_URL=${env['CHAT_SERVICE_BASE_URL']}\nCHAT_SERVICE_KEY_ID=${env['CHAT_SERVICE_KEY_ID']}\nCHAT_SERVICE_KEY_SECRET=${keySecret}\n`,
    )
    const stale = 'http://127.0.0.1:9/rest/v1'
    const ran = await cli(['agents', 'list', '--env-file', envFile], {
      env: { CHAT_SERVICE_BASE_URL: stale, CHAT_SERVICE_KEY_ID: undefined, CHAT_SERVICE_KEY_SECRET: undefined },
    })
    expect(ran).toMatchObject({ code: 1, stdout: '' })
    expect(ran.stderr).toContain('ECONNREFUSED')
    expect(ran.stderr).toContain(
      `chat-service: settings: base URL ${stale} from the environment (CHAT_SERVICE_BASE_URL); --env-file ${envFile} sets ${env['CHAT_SERVICE_BASE_URL']}, which a variable set in the environment overrides\n`,
    )
    expect(ran.stderr).toContain(
      `chat-service: settings: key id ${env['CHAT_SERVICE_KEY_ID']} from --env-file ${envFile} (CHAT_SERVICE_KEY_ID)\n`,
    )
    expect(ran.stderr).toContain(`chat-service: settings: key secret from --env-file ${envFile} (CHAT_SERVICE_KEY_SECRET)\n`)
  })

  it('a 401: the settings it used, and where the key secret came from (never its value)', async () => {
    const ran = await cli(['agents', 'list'], { env: { CHAT_SERVICE_KEY_SECRET: 'sk_wrong_0123456789abcdef' } })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain('chat-service: settings: key secret from the environment (CHAT_SERVICE_KEY_SECRET)\n')
    expect(ran.stderr).toContain(
      `chat-service: settings: base URL ${env['CHAT_SERVICE_BASE_URL']} from the environment (CHAT_SERVICE_BASE_URL)\n`,
    )
    expectNoSecret(ran, ['sk_wrong_0123456789abcdef'])
  })

  it('CHAT_SERVICE_LOG=debug: the SDK logs every attempt on stderr, not stdout, with no secret', async () => {
    const ran = await cli(['agents', 'list'], { env: { CHAT_SERVICE_LOG: 'debug' } })
    expect(jsonLines(ran.stdout)).toHaveLength(DATASET.agents)
    expect(ran.stderr).toMatch(/^chat-service: debug: /m)
  })
})

describe('plain http to a host that is not loopback (another container of a docker-compose)', () => {
  /** An address of this machine that is not loopback (0.0.0.0 reaches this machine too, and is not loopback by the SDK's rule, where there is none). */
  const address =
    Object.values(networkInterfaces())
      .flat()
      .find((candidate) => candidate !== undefined && candidate.family === 'IPv4' && !candidate.internal)?.address ?? '0.0.0.0'
  let open: FakeServerHandle
  let openEnv: Record<string, string>

  beforeAll(async () => {
    open = await fake.listen({ host: '0.0.0.0' }) // as `chat-service-fake --host 0.0.0.0` in TESTING.md's docker-compose
    openEnv = { ...env, CHAT_SERVICE_BASE_URL: `http://${address}:${new URL(open.url).port}/rest/v1` }
  })
  afterAll(async () => {
    await open.close()
  })

  it('refused without the switch: exit 1, saying how to allow it and where the base URL came from, nothing sent', async () => {
    const sent = fake.requests.length
    const ran = await cli(['agents', 'list'], { env: openEnv })
    expect(ran).toMatchObject({ code: 1, stdout: '' })
    const host = new URL(openEnv['CHAT_SERVICE_BASE_URL'] ?? '').host
    expect(ran.stderr).toBe(
      `chat-service: refusing plain http to ${host}, which is not loopback: the key secret would cross the network in clear text. ` +
        'Use https:, or, on a network you trust (a docker-compose network, a test), pass --allow-insecure-http or set CHAT_SERVICE_ALLOW_INSECURE_HTTP=1\n' +
        `chat-service: settings: base URL ${openEnv['CHAT_SERVICE_BASE_URL']} from the environment (CHAT_SERVICE_BASE_URL)\n`,
    )
    expect(fake.requests.length).toBe(sent)
  })

  it.each([
    [['--allow-insecure-http', 'agents', 'list'], {}, 'from --allow-insecure-http'],
    [['agents', 'list', '--allow-insecure-http'], {}, 'from --allow-insecure-http'],
    [['agents', 'list'], { CHAT_SERVICE_ALLOW_INSECURE_HTTP: '1' }, 'from the environment (CHAT_SERVICE_ALLOW_INSECURE_HTTP)'],
  ])('allowed by %j %j: the command runs, with a warning on stderr', async (args, extra, source) => {
    const ran = await cli(args, { env: { ...openEnv, ...extra } })
    expect(ran.code, ran.stderr).toBe(0)
    expect(jsonLines(ran.stdout)).toEqual(fake.listAgents(company))
    const host = new URL(openEnv['CHAT_SERVICE_BASE_URL'] ?? '').host
    expect(ran.stderr).toBe(
      `chat-service: warning: plain http to ${host} (allowed ${source}): the key secret crosses the network in clear text\n`,
    )
  })

  it('no warning where nothing crosses the network in clear text (loopback), and a value of the variable that is not a switch is refused', async () => {
    const loopback = await cli(['agents', 'list', '--allow-insecure-http'])
    expect(loopback).toMatchObject({ code: 0, stderr: '' })
    const wrong = await cli(['agents', 'list'], { env: { ...openEnv, CHAT_SERVICE_ALLOW_INSECURE_HTTP: 'yes' } })
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain('CHAT_SERVICE_ALLOW_INSECURE_HTTP must be 1 (or true)')
  })
})
