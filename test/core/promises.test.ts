/**
 * APIPromise and PagePromise are real Promise subclasses (issue 18, "Promises that behave like
 * promises"): `instanceof Promise`, `withResponse()` and iteration kept, and a call nobody ever
 * handles surfaces as an `unhandledRejection`, like any rejected promise, while the requests the
 * SDK starts on its own (prefetched pages) never do. Unhandled rejections are a property of a whole
 * process, so they are observed in a child process (the SDK loaded from source), against a
 * loopback server that the child runs itself.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'
import tseslint from 'typescript-eslint'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { APIPromise, ChatServiceClient, InternalServerError, PagePromise } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, agent, tokenResponse } from '../helpers/fixtures.ts'
import { rejection, type LoopbackServer, useLoopback } from '../helpers/loopback.ts'
import { sdkBundleEnv } from '../helpers/sdk-bundle.ts'

const FROM_SOURCE = fileURLToPath(new URL('../helpers/sdk-from-source.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

let server: LoopbackServer
let client: ChatServiceClient

useLoopback((started) => {
  server = started
})
beforeEach(() => {
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0, logLevel: 'off' })
})
afterEach(async () => {
  await client.close()
})

describe('Promise subclasses', () => {
  it('APIPromise and PagePromise are instances of Promise; then, catch and finally give plain Promises', async () => {
    server.respond((request) =>
      request.method === 'POST'
        ? { body: tokenResponse() }
        : { body: { data: [agent(1)], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } } },
    )
    const token = client.auth.issueToken({ userId: 'ext-1' })
    const agents = client.agents.list()
    expect(token).toBeInstanceOf(Promise)
    expect(token).toBeInstanceOf(APIPromise)
    expect(agents).toBeInstanceOf(Promise)
    expect(agents).toBeInstanceOf(PagePromise)
    expect(Object.prototype.toString.call(token)).toBe('[object APIPromise]')
    const then = token.then((result) => result.token)
    expect(then).not.toBeInstanceOf(APIPromise)
    expect(then).toBeInstanceOf(Promise)
    expect(agents.catch(() => undefined)).not.toBeInstanceOf(PagePromise)
    expect(await then).toBe(tokenResponse().token)
    expect((await token.withResponse()).response.status).toBe(200)
    expect((await agents).data).toEqual([agent(1)])
    const items: unknown[] = []
    for await (const item of client.agents.list()) items.push(item)
    expect(items).toEqual([agent(1)])
    expect(await Promise.all([client.agents.list(), client.auth.issueToken({ userId: 'ext-2' })])).toHaveLength(2)
  })

  it('a failure reaches await, catch, withResponse() and iteration alike', async () => {
    server.respond(() => ({ status: 500, body: { error: 'boom' } }))
    expect(await rejection(client.auth.issueToken({ userId: 'ext-1' }))).toBeInstanceOf(InternalServerError)
    expect(await client.auth.issueToken({ userId: 'ext-1' }).catch((error: unknown) => error)).toBeInstanceOf(InternalServerError)
    expect(await rejection(client.auth.issueToken({ userId: 'ext-1' }).withResponse())).toBeInstanceOf(InternalServerError)
    expect(await rejection(client.agents.list().withResponse())).toBeInstanceOf(InternalServerError)
    const iterating = (async () => {
      for await (const _ of client.agents.list()) {
        // never reached
      }
    })()
    expect(await rejection(iterating)).toBeInstanceOf(InternalServerError)
  })
})

/** What the child reports: the name of each unhandled rejection, and how each case ended. */
interface ChildReport {
  unhandled: string[]
  done: string[]
}

/**
 * Runs `body` (statements with `client` and `origin` in scope) in a child process, against a server
 * in the child that answers page 1 of any list with `total_pages: 5`, every later page with a 500
 * after 50 ms, token issuance with a 500, and waits for the process to settle.
 */
async function inChild(body: string): Promise<ChildReport> {
  const dir = mkdtempSync(join(tmpdir(), 'chat-service-sdk-promises-'))
  try {
    const script = join(dir, 'child.ts')
    writeFileSync(
      script,
      `
import { createServer } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { ChatServiceClient } from 'chat-service-sdk'
const unhandled: string[] = []
const done: string[] = []
process.on('unhandledRejection', (reason) => { unhandled.push((reason as Error).name) })
const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1)
    if (req.method === 'GET' && page === 1) {
      const at = '2026-01-01T00:00:00Z'
      const conversations = (req.url ?? '').includes('/conversations')
      const data = Array.from({ length: 20 }, (_, i) =>
        conversations
          ? { id: 'c' + i, title: 't', customer_user_id: 'u', message_count: 0, created_at: at, updated_at: at }
          : { id: 'a' + i, name: 'n', active: true, created_at: at, updated_at: at },
      )
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ data, pagination: { page: 1, limit: 20, total: 100, total_pages: 5 } }))
      return
    }
    setTimeout(() => { res.writeHead(500); res.end('{"error":"boom"}') }, 50)
  })
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const origin = 'http://127.0.0.1:' + (server.address() as { port: number }).port
const client = new ChatServiceClient({ baseUrl: origin, keyId: 'key_1', keySecret: 'sk_test_0123456789abcdef', maxRetries: 0, logLevel: 'off' })
${body}
await sleep(500)
await client.close()
server.close()
console.log(JSON.stringify({ unhandled, done }))
`,
    )
    const child = spawn(process.execPath, ['--no-warnings', '--import', FROM_SOURCE, script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...(await sdkBundleEnv()) },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect(code, stderr).toBe(0)
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as ChildReport
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('unhandled rejections (in a child process)', () => {
  it('a forgotten call that fails is an unhandledRejection, as any promise would be: a single result and a list', async () => {
    const report = await inChild(`
void client.customerUsers.update('cu-1', { name: 'n' })
void client.auth.issueToken({ userId: 'ext-1' })
void client.agents.list({ page: 2 })
void client.customerUsers.update('', { name: 'n' }) // refused before sending: RequestValidationError
`)
    expect(report.unhandled.sort()).toEqual(['InternalServerError', 'InternalServerError', 'InternalServerError', 'RequestValidationError'])
  }, 30_000)

  it('what the caller handles (await, catch, withResponse, iteration) and what the SDK starts on its own (prefetched pages) never is', async () => {
    const report = await inChild(`
await client.auth.issueToken({ userId: 'ext-1' }).catch(() => done.push('catch'))
await client.auth.issueToken({ userId: 'ext-1' }).withResponse().catch(() => done.push('withResponse'))
await client.agents.list({ page: 2 }).withResponse().catch(() => done.push('list withResponse'))
try { await client.auth.issueToken({ userId: 'ext-1' }) } catch { done.push('await') }
try {
  for await (const _ of client.agents.list({ page: 2 })) { /* the first page fails */ }
} catch { done.push('iteration') }
// Pages 2-5 are prefetched and fail; the loop leaves after page 1, before it reaches them.
for await (const page of client.agents.list({}, { prefetch: 4 }).pages()) { done.push('page ' + page.pagination.page); break }
// The loop reaches page 2, whose failure it throws; pages 3-5, prefetched, fail unseen.
try {
  for await (const _ of client.conversations.list({}, { prefetch: 4 }).pages()) { await sleep(100) }
} catch { done.push('prefetch error at page 2') }
`)
    expect(report.done).toEqual(['catch', 'withResponse', 'list withResponse', 'await', 'iteration', 'page 1', 'prefetch error at page 2'])
    expect(report.unhandled).toEqual([])
  }, 30_000)
})

// With the thenables of 0.2, this rule at its defaults missed 2 of these 3 forgotten calls.
it('@typescript-eslint/no-floating-promises at its defaults flags a forgotten call of each kind', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chat-service-sdk-floating-'))
  try {
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2023',
          lib: ['ES2023', 'ES2024.String', 'ESNext.Disposable'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
          strict: true,
          skipLibCheck: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          paths: { 'chat-service-sdk': [join(ROOT, 'src/index.ts')] },
        },
        include: ['*.ts'],
      }),
    )
    const file = join(dir, 'forgotten.ts')
    writeFileSync(
      file,
      [
        "import type { ChatServiceClient } from 'chat-service-sdk'",
        'export function forgotten(client: ChatServiceClient): void {',
        "  client.customerUsers.update('cu-1', { name: 'n' })",
        '  client.agents.list()',
        "  client.auth.issueToken({ userId: 'u' })",
        '}',
        '',
      ].join('\n'),
    )
    const eslint = new ESLint({
      cwd: dir,
      overrideConfigFile: true,
      overrideConfig: [
        {
          files: ['**/*.ts'],
          languageOptions: {
            parser: tseslint.parser,
            // 'type-info': no JSDoc of .ts files parsed (the rule reads types, which JSDoc does not
            // change there): ~0.4 s of the program's ~2.5 s of CPU, most of it parsing @types/node.
            parserOptions: { project: join(dir, 'tsconfig.json'), tsconfigRootDir: dir, jsDocParsingMode: 'type-info' },
          },
          plugins: { '@typescript-eslint': tseslint.plugin },
          rules: { '@typescript-eslint/no-floating-promises': 'error' },
        },
      ],
    })
    const [result] = await eslint.lintFiles([file])
    expect(result?.messages.map((message) => [message.line, message.ruleId])).toEqual([
      [3, '@typescript-eslint/no-floating-promises'],
      [4, '@typescript-eslint/no-floating-promises'],
      [5, '@typescript-eslint/no-floating-promises'],
    ])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}, 120_000)
