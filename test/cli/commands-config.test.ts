// Where `chat-service` takes its configuration from (flags, the environment, --env-file) and its
// warning for plain http to a host that is not loopback, as a user runs the command against the fake
// service in listen mode, never a secret in the output: as `main` runs it in this process, and
// Node.js's own check of --env-file as a child process of the command installed from the packed
// tarball (commands-kit.ts: the set-up, `cli` and `cliProcess`).
import { writeFileSync } from 'node:fs'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FakeServerHandle } from 'chat-service-sdk/testing'
import { expectNoSecret, jsonLines } from './helpers.ts'
import { cli, cliProcess, company, DATASET, env, fake, installed, keySecret, server, useCommands } from './commands-kit.ts'

useCommands()

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
    const missing = await cliProcess(['agents', 'list', '--env-file', join(installed.dir, 'nope.env')])
    expect(missing.code).toBe(9) // docs/command.md, "Exit status", and the help say 9
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
