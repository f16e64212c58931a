// `chat-service`, the package's second bin, as a user runs it, against the fake service in listen
// mode: what only a process shows (the bin, its start-up, exit status, pipes, terminals) as a child
// process of the command installed from the packed tarball; every command and format as `main` runs
// it in this process (commands-kit.ts, `cli`). Every command and format, piping, --max-items,
// terminals, and never a secret in the output; users find/update and the
// failures are in commands-users.test.ts, where the configuration comes from in
// commands-config.test.ts (commands-kit.ts: what the three share).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { expectNoSecret, jsonLines, runOnTerminal, shellQuote } from './helpers.ts'
import {
  cli,
  cliProcess,
  company,
  DATASET,
  env,
  fake,
  installed,
  keySecret,
  PACKAGE,
  requestsSince,
  server,
  useCommands,
  VERSION,
} from './commands-kit.ts'

useCommands()

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
    const ran = await cliProcess(['agents', 'list', '--format', 'jsonl', '--max-items', '1'], {
      env: { TMPDIR: tmp, NODE_COMPILE_CACHE: undefined },
    })
    expect(ran.code).toBe(0)
    expect(readdirSync(join(tmp, 'node-compile-cache'), { recursive: true }).length).toBeGreaterThan(0)
  })

  it('a compile cache that cannot be written (TMPDIR names a file, as a read-only file system would refuse it) costs the cache only: the command runs, nothing said', async () => {
    const tmp = join(installed.dir, 'not-a-directory')
    writeFileSync(tmp, '')
    const ran = await cliProcess(['agents', 'list', '--format', 'jsonl', '--max-items', '1'], {
      env: { TMPDIR: tmp, NODE_COMPILE_CACHE: undefined },
    })
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' })
    expect(jsonLines(ran.stdout)).toHaveLength(1)
  })
})

describe('help', () => {
  it('--help lists every command, on stdout, exit 0', async () => {
    const ran = await cliProcess(['--help'])
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
    const ran = await cliProcess(['agents', 'list'])
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
