// Every ```ts block of README.md and of the guides under docs/, as written: type-checked with
// `strict` and `noUncheckedIndexedAccess`, then run, one module each, against the fake service in
// listen mode with the CHAT_SERVICE_* environment set and the globals of snippet-globals.d.ts (a
// `client`, a `conversationId`). A block right after `<!-- snippet: type-check only -->` is only
// type-checked (the testing-kit examples, which are vitest files: test/docs/readme-listen.test.ts
// and readme-msw.test.ts run them; the nightly workers: indexed-job.test.ts runs one). TESTING.md is
// not read here: its blocks are fragments of vitest files. If this fails, the document is wrong.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type FakeServerHandle } from 'chat-service-sdk/testing'
import { blocks, documents, ROOT as root } from './documents.ts'
import { typeCheck } from './snippet-types.ts'

const dir = join(root, 'test/docs/.snippets')

interface Snippet {
  /** Where the block is: `docs/paging.md:12` (the line of its opening fence). */
  readonly at: string
  readonly code: string
  readonly run: boolean
  readonly file: string
}

function allSnippets(): Snippet[] {
  return documents()
    .filter((document) => document !== 'TESTING.md')
    .flatMap((document) =>
      blocks(document)
        .filter((block) => block.lang === 'ts')
        .map((block) => ({
          at: `${document}:${block.line}`,
          code: block.code,
          run: block.marker !== '<!-- snippet: type-check only -->',
          file: join(dir, `${document.replace(/\.md$/, '').replace(/\W/g, '-')}-line-${block.line}.ts`),
        })),
    )
}

const snippets = allSnippets()
const byFile = new Map(snippets.map((snippet) => [snippet.file, snippet]))

/**
 * A stand-in for the ioredis client of the `rateLimitStore` snippet (docs/rate-limits.md): `get`, and
 * `eval` of its two scripts, in JavaScript: keep the later of the stored moment and the new one
 * (SET_LATER), and `take` (TAKE: the contract of RateLimitStore.take). The Lua itself runs against a
 * real Redis in test/examples/redis-store.test.ts, which also holds the guide's TAKE to the example's.
 */
function memoryRedis(): typeof globalThis.redis {
  const values = new Map<string, string>()
  let bucket: { tokens: number; at: number } | undefined
  let learned: [string, string, string] | undefined
  const take = (args: (string | number)[]): unknown[] => {
    const [want, reserve, rate, burst, max, at, recoveryMs] = args.map(String) as [string, string, string, string, string, string, string]
    if (max !== '' && (learned === undefined || Number(at) > Number(learned[1]))) learned = [max, at, recoveryMs]
    let granted = 0
    if (Number(want) > 0) {
      const now = Date.now()
      const tokens = Math.min(
        Number(burst),
        (bucket?.tokens ?? Number(burst)) + (Math.max(0, now - (bucket?.at ?? now)) * Number(rate)) / 1000,
      )
      granted = Math.max(0, Math.min(Number(want), Math.floor(tokens - Number(reserve))))
      bucket = { tokens: tokens - granted, at: now }
    }
    return [granted, ...(learned ?? [null, null, null])]
  }
  return {
    get: (key) => Promise.resolve(values.get(key) ?? null),
    eval: (script, _numkeys, key, ...args) => {
      if (script.includes("redis.call('HMGET', KEYS[1], 'tokens', 'at', 'max', 'learnedAt', 'recoveryMs')"))
        return Promise.resolve(take(args))
      if (!script.includes("redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[1])")) throw new Error(`unexpected script: ${script}`)
      const [value] = args
      if (Number(values.get(String(key)) ?? '0') < Number(value)) values.set(String(key), String(value))
      return Promise.resolve(null)
    },
  }
}

beforeAll(() => {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  // `export {}` makes each snippet a module, so its own `const client` may shadow the global one.
  for (const snippet of snippets) writeFileSync(snippet.file, `${snippet.code}\nexport {}\n`)
})

it('README.md and the guides have ts snippets to check', () => {
  expect(snippets.filter((snippet) => snippet.at.startsWith('README.md:')).length).toBeGreaterThan(10)
  expect(snippets.length).toBeGreaterThan(30)
})

it('every snippet type-checks with strict, noUncheckedIndexedAccess and exactOptionalPropertyTypes', async () => {
  // TypeScript 7 in a child process (snippet-types.ts says why); the options are there.
  const found = await typeCheck({
    files: snippets.map((snippet) => snippet.file),
    globals: join(root, 'test/docs/snippet-globals.d.ts'),
    root,
  })
  const problems = found.map(({ file, line, message }) => {
    const snippet = byFile.get(file)
    if (snippet === undefined) return `${file === '' ? 'the compile' : file}: ${message}`
    const [document, fence] = snippet.at.split(':')
    return `${document}:${Number(fence) + line + 1}: ${message}`
  })
  expect(problems).toEqual([])
}, 60_000)

describe('every snippet runs against the fake', () => {
  const seed = generateDataset({ seed: 1, agents: 5, customerUsers: 40, conversations: 12, messages: 400 })
  const company = seed.companies[0]
  const key = company?.keys[0]
  const withMessages = company?.conversations?.find((conversation) =>
    (company.messages ?? []).some((m) => m.conversation_id === conversation.id),
  )
  let server: FakeServerHandle
  let cwd: string
  const variables = ['CHAT_SERVICE_BASE_URL', 'CHAT_SERVICE_KEY_ID', 'CHAT_SERVICE_KEY_SECRET', 'CHAT_SERVICE_LOG'] as const
  const saved = { cwd: process.cwd(), env: variables.map((name) => [name, process.env[name]] as const) }

  beforeAll(async () => {
    server = await createFakeChatService({ seed }).listen()
    process.env['CHAT_SERVICE_BASE_URL'] = server.url
    process.env['CHAT_SERVICE_KEY_ID'] = key?.keyId
    process.env['CHAT_SERVICE_KEY_SECRET'] = key?.keySecret
    process.env['CHAT_SERVICE_LOG'] = 'error'
    // Snippets may write files (a cursor): somewhere that is not the repository.
    cwd = mkdtempSync(join(tmpdir(), 'doc-snippets-'))
    process.chdir(cwd)
  })
  afterAll(async () => {
    process.chdir(saved.cwd)
    // Each variable put back (process.env itself must stay Node's object: replacing it with a plain
    // copy cuts it off from the environment that child processes and vi.stubEnv use).
    for (const [name, value] of saved.env) {
      if (value === undefined) Reflect.deleteProperty(process.env, name)
      else process.env[name] = value
    }
    for (const name of ['client', 'conversationId', 'redis']) Reflect.deleteProperty(globalThis, name)
    rmSync(cwd, { recursive: true, force: true })
    await server.close()
  })

  it.each(snippets.filter((snippet) => snippet.run).map((snippet) => [snippet.at, snippet] as const))(
    '%s',
    async (_line, snippet) => {
      const client = new ChatServiceClient()
      Object.assign(globalThis, { client, conversationId: withMessages?.id, redis: memoryRedis() })
      // What the snippets print is for readers, not for the test log.
      const { log, error } = console
      console.log = () => undefined
      console.error = () => undefined
      try {
        await import(pathToFileURL(snippet.file).href)
      } finally {
        console.log = log
        console.error = error
        await client.close()
      }
    },
    30_000,
  )
})
