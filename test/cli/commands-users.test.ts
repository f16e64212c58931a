// `chat-service users find` and `users update`, and every failure's exit status and message, as a
// user runs the command against the fake service in listen mode, never a secret in the output:
// exit statuses 1, 2 and 130 as a child process of the command installed from the packed tarball
// (2: the refused credential flags), the rest as `main` runs it in this process, the usage errors'
// messages and help included: `main` returns the status the bin exits with (commands-kit.ts: the
// set-up, `cli` and `cliProcess`).
import { describe, expect, it } from 'vitest'
import { expectNoSecret, jsonLines, poll, startCli } from './helpers.ts'
import { cli, cliProcess, company, env, fake, installed, keySecret, requestsSince, useCommands } from './commands-kit.ts'

useCommands()

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
    const ran = await cliProcess(['conversations', 'list'], { env: { CHAT_SERVICE_KEY_SECRET: 'sk_wrong_0123456789abcdef' } })
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
    expect(ran.stderr).not.toContain('settings:')
  })

  it('a 404 for a whole list under a base URL with a path: the message, then where the base URL came from', async () => {
    const base = `${env['CHAT_SERVICE_BASE_URL'] ?? ''}/api`
    const ran = await cli(['agents', 'list'], { env: { CHAT_SERVICE_BASE_URL: base } })
    expect(ran).toMatchObject({ code: 1, stdout: '' })
    expect(ran.stderr).toMatch(/^chat-service: 404 Not Found: GET \/api\/rest\/v1\/agents/)
    expect(ran.stderr).toContain(`chat-service: settings: base URL ${base} from the environment (CHAT_SERVICE_BASE_URL)`)
    // A 404 for one resource may be the service's own "not found" of it: no settings there.
    const one = await cli(['messages', 'list', 'conv_nope'], { env: { CHAT_SERVICE_BASE_URL: base } })
    expect(one.stderr).toMatch(/^chat-service: 404 Not Found: GET \/api\/rest\/v1\/conversations\/conv_nope\/messages/)
    expect(one.stderr).not.toContain('settings:')
  })

  it.each([
    [['agents', 'list', '--bogus'], 'unknown option --bogus for agents list', 'Usage: chat-service agents list'],
    [['agent', 'list'], 'unknown command "agent"', 'Commands:'],
    [['users'], 'users needs a subcommand: users find, users list, users update', 'Commands:'],
    [[], 'a command is required', 'Commands:'],
    [['messages', 'list'], 'messages list needs CONVERSATION_ID', 'Usage: chat-service messages list CONVERSATION_ID'],
    [['agents', 'list', '--format', 'xml'], '--format must be table, json, jsonl, not "xml"', 'Usage: chat-service agents list'],
    [['agents', 'list', '--max-items', '0'], '--max-items must be a whole number 1 or more, not "0"', 'Usage: chat-service agents list'],
    [
      ['agents', 'list', '--max-items', '-1'],
      '--max-items needs a value (--max-items=N for one that starts with "-")',
      'Usage: chat-service agents list',
    ],
    [['agents', 'list', '--max-items=-1'], '--max-items must be a whole number 1 or more, not "-1"', 'Usage: chat-service agents list'],
    [['agents', 'list', '--help=1'], '--help takes no value', 'Usage: chat-service agents list'],
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
    const ran = await cliProcess(['agents', 'list', ...flag])
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
