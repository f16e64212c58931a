// `npm run release:check` (scripts/release/check.ts; its checks in gate.ts, run here in a thread of
// this process, gate-thread.ts, but for one test of the command line), on temporary copies of the
// repository's release files (package.json, CHANGELOG.md, api/, src/version.ts) with a change
// planted in them: breaking changes need a "Breaking" entry naming them and the next minor version,
// additions an "Added" entry, deprecations a "Deprecated" entry; the last release's consumer
// fixtures compile against today's types, and one that no longer compiles must be a listed break.
// The package's own files (packing) are checked by the CI step, not here (it needs a build).
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startGateThread } from './gate-thread.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const LAST = '0.3.0'
const REPORT = 'api/chat-service-sdk.api.md'
const temporary: string[] = []

interface Gate {
  readonly code: number
  readonly output: string
}

/** The gate's thread (gate-thread.ts: scripts/release/gate.ts, outside this isolate), for the whole file. */
const thread = startGateThread()

/** Runs the gate (scripts/release/gate.ts, in this process's thread) on `dir` with `flags` as the command line takes them. */
async function gate(dir: string, ...flags: string[]): Promise<Gate> {
  const value = (flag: string): string | undefined => {
    const at = flags.indexOf(flag)
    return at < 0 ? undefined : flags[at + 1]
  }
  const { problems, lines } = await thread.run({
    root: dir,
    package: value('--package'),
    pack: !flags.includes('--no-pack'),
    fixtures: !flags.includes('--no-fixtures'),
    publishDryRun: !flags.includes('--no-publish-dry-run'),
  })
  return { code: problems.length === 0 ? 0 : 1, output: `${lines.join('\n')}\n` }
}

/** Runs the gate's command line (`npm run release:check` is `node scripts/release/check.ts`) on `dir`. */
function command(dir: string, ...flags: string[]): Promise<Gate> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'scripts/release/check.ts'), '--root', dir, ...flags],
      { encoding: 'utf8' },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: stdout + stderr })
      },
    )
  })
}

function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  temporary.push(dir)
  return dir
}

/** A copy of the repository's release files, as they are. */
function copyOfRepository(): string {
  const dir = temp('release-check-')
  for (const file of ['package.json', 'CHANGELOG.md', 'src/version.ts', 'README.md']) cpSync(join(root, file), join(dir, file))
  for (const folder of ['api', 'docs']) {
    cpSync(join(root, folder), join(dir, folder), { recursive: true, filter: (path) => !path.includes('/docs/api') })
  }
  return dir
}

/** A copy in which nothing changed since 0.3.0: its reports are the release's, its Unreleased section empty. */
function copyAtRelease(): string {
  const dir = copyOfRepository()
  for (const name of ['chat-service-sdk', 'chat-service-sdk-testing', 'chat-service-sdk-testing-msw']) {
    cpSync(join(dir, `api/releases/${LAST}/${name}.api.md`), join(dir, `api/${name}.api.md`))
  }
  const changelog = read(dir, 'CHANGELOG.md')
  write(
    dir,
    'CHANGELOG.md',
    changelog.slice(0, changelog.indexOf('## [Unreleased]')) + `## [Unreleased]\n\n${changelog.slice(changelog.indexOf(`## [${LAST}]`))}`,
  )
  write(dir, 'package.json', read(dir, 'package.json').replace(/"version": "[^"]+"/, `"version": "${LAST}"`))
  return dir
}

const read = (dir: string, file: string): string => readFileSync(join(dir, file), 'utf8')
const write = (dir: string, file: string, text: string): void => {
  writeFileSync(join(dir, file), text)
}
const edit = (dir: string, file: string, from: string | RegExp, to: string): void => {
  const text = read(dir, file)
  const changed = text.replace(from, to)
  if (changed === text) throw new Error(`${file} has no ${String(from)}`)
  write(dir, file, changed)
}

/** Adds entries under `heading` of the Unreleased section. */
function unreleased(dir: string, heading: string, ...entries: string[]): void {
  edit(
    dir,
    'CHANGELOG.md',
    '## [Unreleased]\n',
    `## [Unreleased]\n\n### ${heading}\n\n${entries.map((entry) => `- ${entry}`).join('\n')}\n`,
  )
}

/** Makes the Unreleased section the dated section of `version`, and package.json and VERSION say it. */
function release(dir: string, version: string): void {
  edit(dir, 'CHANGELOG.md', '## [Unreleased]\n', `## [Unreleased]\n\n## [${version}] - 2026-12-01\n`)
  edit(dir, 'package.json', /"version": "[^"]+"/, `"version": "${version}"`)
  edit(dir, 'src/version.ts', /VERSION = '[^']+'/, `VERSION = '${version}'`)
}

/** A breaking change planted in the report: ChatServiceClient.rateLimitedUntil is gone. */
function removeRateLimitedUntil(dir: string): void {
  edit(dir, REPORT, /\n\s*get rateLimitedUntil\(\): Date \| undefined;/, '')
}

afterAll(async () => {
  await thread.close()
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true })
})

const quick = ['--no-pack', '--no-fixtures'] as const

describe('the API against the last release', () => {
  it('nothing changed and nothing in Unreleased: passes, nothing to release', async () => {
    const ran = await gate(copyAtRelease(), ...quick)
    expect(ran.output).toContain('nothing to release since 0.3.0')
    expect(ran.code).toBe(0)
  })

  it('a member removed without a version bump or an entry: fails, naming it and saying what to write', async () => {
    const dir = copyAtRelease()
    removeRateLimitedUntil(dir)
    const ran = await command(dir, ...quick) // the command line: its output and exit status
    expect(ran.code).toBe(1)
    expect(ran.output).toContain('breaking   chat-service-sdk: ChatServiceClient.rateLimitedUntil (removed)')
    expect(ran.output).toContain('- Breaking (`ChatServiceClient.rateLimitedUntil`)')
    // A child process that loads TypeScript and api-extractor: 3-5 s, over 20 s once at the suite's
    // start beside a helper's simulations (the bound is for a hang, not for the machine's load).
  }, 120_000)

  it('with a "Breaking" entry naming it: passes between releases and says the next release must be 0.4.0', async () => {
    const dir = copyAtRelease()
    removeRateLimitedUntil(dir)
    unreleased(dir, 'Changed', 'Breaking (`ChatServiceClient.rateLimitedUntil`): gone; read `RateLimitError.retryAfterMs`.')
    const ran = await gate(dir, ...quick)
    expect(ran.output).toContain('the next release must be 0.4.0 or later (package.json stays 0.3.0 until then)')
    expect(ran.code).toBe(0)
  })

  it('naming the whole export covers its members; naming another member does not', async () => {
    const dir = copyAtRelease()
    removeRateLimitedUntil(dir)
    unreleased(dir, 'Changed', 'Breaking (`ChatServiceClient.close`): something else.')
    expect((await gate(dir, ...quick)).code).toBe(1)
    edit(dir, 'CHANGELOG.md', '`ChatServiceClient.close`', '`ChatServiceClient`')
    expect((await gate(dir, ...quick)).code).toBe(0)
  })

  it('a "Breaking" entry without the word at its start is not one', async () => {
    const dir = copyAtRelease()
    removeRateLimitedUntil(dir)
    unreleased(dir, 'Changed', '`ChatServiceClient.rateLimitedUntil` is gone (Breaking).')
    expect((await gate(dir, ...quick)).code).toBe(1)
  })

  it('released as 0.3.1 (a patch) it fails: a breaking change needs 0.4.0; released as 0.4.0 it passes', async () => {
    const dir = copyAtRelease()
    removeRateLimitedUntil(dir)
    unreleased(dir, 'Changed', 'Breaking (`ChatServiceClient.rateLimitedUntil`): gone.')
    release(dir, '0.3.1')
    const patch = await gate(dir, ...quick)
    expect(patch.output).toContain('package.json says 0.3.1, but the change since 0.3.0 is breaking: it needs 0.4.0 or later')
    expect(patch.code).toBe(1)
    const dir2 = copyAtRelease()
    removeRateLimitedUntil(dir2)
    unreleased(dir2, 'Changed', 'Breaking (`ChatServiceClient.rateLimitedUntil`): gone.')
    release(dir2, '0.4.0')
    const minor = await gate(dir2, ...quick)
    expect(minor.output).toContain('releasing 0.4.0: the change since 0.3.0 is breaking, which needs 0.4.0 or later')
    expect(minor.code).toBe(0)
  })

  it('a release whose VERSION or CHANGELOG date disagrees fails', async () => {
    const dir = copyAtRelease()
    unreleased(dir, 'Fixed', 'Something.')
    release(dir, '0.3.1')
    edit(dir, 'src/version.ts', "VERSION = '0.3.1'", "VERSION = '0.3.0'")
    edit(dir, 'CHANGELOG.md', '## [0.3.1] - 2026-12-01', '## [0.3.1]')
    const ran = await gate(dir, ...quick)
    expect(ran.output).toContain("src/version.ts's VERSION is not '0.3.1'")
    expect(ran.output).toContain('has no date')
    expect(ran.code).toBe(1)
  })

  it('a version section in the CHANGELOG while package.json is not bumped fails', async () => {
    const dir = copyAtRelease()
    edit(dir, 'CHANGELOG.md', '## [Unreleased]\n', '## [Unreleased]\n\n## [0.4.0] - 2026-12-01\n\n### Fixed\n\n- Something.\n')
    const ran = await gate(dir, ...quick)
    expect(ran.output).toContain('while package.json still says 0.3.0')
    expect(ran.code).toBe(1)
  })

  it("the README and the guides may pin only a released version (docs/command.md's Kubernetes recipe installs chat-service-sdk@0.3.0)", async () => {
    const dir = copyAtRelease()
    expect(read(dir, 'docs/command.md')).toContain('chat-service-sdk@0.3.0')
    edit(dir, 'docs/command.md', 'chat-service-sdk@0.3.0', 'chat-service-sdk@0.4.0')
    const ran = await gate(dir, ...quick)
    expect(ran.output).toContain('docs/command.md pins chat-service-sdk@0.4.0, which is not a release (api/releases/ has 0.3.0)')
    expect(ran.code).toBe(1)
  })

  it('an added export needs an "Added" entry; with one, the next release is a patch', async () => {
    const dir = copyAtRelease()
    edit(
      dir,
      REPORT,
      '// @public\r\nexport const VERSION',
      '// @public\r\nexport const NEW_LIMIT = 5;\r\n\r\n// @public\r\nexport const VERSION',
    )
    const without = await gate(dir, ...quick)
    expect(without.output).toContain('additive   chat-service-sdk: NEW_LIMIT (added)')
    expect(without.output).toContain('no entry under "## [Unreleased]" is under "### Added"')
    expect(without.code).toBe(1)
    unreleased(dir, 'Added', '`NEW_LIMIT`.')
    const ran = await gate(dir, ...quick)
    expect(ran.output).toContain('the next release must be 0.3.1 or later')
    expect(ran.code).toBe(0)
  })

  it('a new required member of an interface is breaking, an optional one additive, a trailing optional parameter additive', async ({
    expect,
  }) => {
    const dir = copyAtRelease()
    edit(
      dir,
      REPORT,
      /(export interface RateLimitStore \{)/,
      '$1\r\n    readonly name: string;\r\n    readonly label?: string | undefined;',
    )
    edit(
      dir,
      REPORT,
      'list(params?: AgentListParams, options?: ListRequestOptions): PagePromise<Agent>;',
      'list(params?: AgentListParams, options?: ListRequestOptions, extra?: number): PagePromise<Agent>;',
    )
    const ran = await gate(dir, ...quick)
    expect(ran.output).toContain('breaking   chat-service-sdk: RateLimitStore.name (added as a required member)')
    expect(ran.output).toContain('additive   chat-service-sdk: RateLimitStore.label (added)')
    expect(ran.output).toContain('additive   chat-service-sdk: Agents.list (gained optional parameters)')
    expect(ran.code).toBe(1)
    // An interface users only receive: an "Added" entry naming the member says so.
    unreleased(dir, 'Added', '`RateLimitStore.name`, `RateLimitStore.label`, `Agents.list` takes `extra`.')
    const added = await gate(dir, ...quick)
    expect(added.output).toContain(
      'additive   chat-service-sdk: RateLimitStore.name (added as a required member; an "Added" entry says users only receive it)',
    )
    expect(added.code).toBe(0)
  })

  it('a member moved to the base class is not removed; a widened input needs a non-Breaking entry naming it', async () => {
    const dir = copyAtRelease()
    edit(dir, REPORT, /(export class RateLimitError extends APIError \{)\r\n\s*constructor\(init: APIErrorInit, message\?: string\);/, '$1')
    edit(dir, REPORT, /(export class RateLimitError extends APIError \{[^}]*?)\r\n\s*readonly retryAfterMs: number \| undefined;/, '$1')
    edit(dir, REPORT, /(export class APIError extends ChatServiceError \{)/, '$1\r\n    readonly retryAfterMs: number | undefined;')
    const testing = 'api/chat-service-sdk-testing.api.md'
    edit(dir, testing, 'compression?: boolean | undefined;', "compression?: boolean | 'gzip' | undefined;")
    const ran = await gate(dir, ...quick)
    expect(ran.output).not.toContain('RateLimitError.retryAfterMs')
    expect(ran.output).not.toContain('RateLimitError.constructor')
    expect(ran.output).toContain('additive   chat-service-sdk: APIError.retryAfterMs (added)')
    expect(ran.output).toContain('breaking   chat-service-sdk/testing: FakeChatServiceOptions.compression (changed)')
    expect(ran.code).toBe(1)
    unreleased(dir, 'Changed', '`FakeChatServiceOptions.compression` also takes `gzip`; `true` and `false` mean what they did.')
    unreleased(dir, 'Added', '`APIError.retryAfterMs`.')
    const said = await gate(dir, ...quick)
    expect(said.output).toContain('FakeChatServiceOptions.compression (changed; an entry that is not "Breaking" names it: compatible)')
    expect(said.code).toBe(0)
  })

  it('a type alias spelled out where it was used is the same type: only the removed alias is breaking', async () => {
    const dir = copyAtRelease()
    // 0.4's Message: the alias MessageRole gone, its union spelled out in another order.
    edit(dir, REPORT, /\/\/ @public\r\nexport type MessageRole = [^\r\n]*\r\n\r\n/, '')
    edit(dir, REPORT, 'role: MessageRole;', "role: (string & {}) | 'assistant' | 'user';")
    // An interface spelled out (its members in another order), and a constructor's parameter given
    // as `ConstructorParameters<typeof APIError>[0]`, where APIErrorInit was.
    edit(dir, REPORT, /\/\/ @public\r\nexport interface WithResponse<T> \{[^}]*\}\r\n\r\n/, '')
    edit(
      dir,
      REPORT,
      'withResponse(): Promise<WithResponse<T>>;',
      'withResponse(): Promise<{ readonly response: APIResponse; readonly data: T }>;',
    )
    edit(
      dir,
      REPORT,
      'withResponse(): Promise<WithResponse<P>>;',
      'withResponse(): Promise<{ readonly response: APIResponse; readonly data: P }>;',
    )
    const init =
      '{ readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: unknown; readonly method: string; ' +
      'readonly path: string; readonly requestId?: string | undefined; readonly retryAfterMs?: number | undefined }'
    edit(dir, REPORT, /\/\/ @public\r\nexport interface APIErrorInit \{[^}]*\}\r\n\r\n/, '')
    edit(
      dir,
      REPORT,
      /(export class APIError extends ChatServiceError \{\r\n\s*)constructor\(init: APIErrorInit,/,
      `$1constructor(init: ${init},`,
    )
    edit(dir, REPORT, /(export class RateLimitError extends APIError \{)\r\n\s*constructor\(init: APIErrorInit, message\?: string\);/, '$1')
    edit(dir, REPORT, 'constructor(init: APIErrorInit & {', 'constructor(init: ConstructorParameters<typeof APIError>[0] & {')
    const ran = await gate(dir, ...quick)
    for (const name of ['MessageRole', 'WithResponse', 'APIErrorInit'])
      expect(ran.output).toContain(`breaking   chat-service-sdk: ${name} (removed)`)
    for (const key of [
      'Message.role',
      'APIPromise.withResponse',
      'PagePromise.withResponse',
      'APIError.constructor',
      'RateLimitError.constructor',
    ])
      expect(ran.output).not.toContain(`chat-service-sdk: ${key} (`)
    expect(ran.output).not.toContain('ResponseValidationError.constructor')
    // A generic named with its type parameters names it.
    unreleased(
      dir,
      'Changed',
      "Breaking (`MessageRole`, `WithResponse<T>`, `APIErrorInit`): use `Message['role']` and what they stood for.",
    )
    expect((await gate(dir, ...quick)).code).toBe(0)
    // Spelled out as another type, it is a change.
    edit(dir, REPORT, "role: (string & {}) | 'assistant' | 'user';", "role: 'assistant' | 'user';")
    const narrowed = await gate(dir, ...quick)
    expect(narrowed.output).toContain('breaking   chat-service-sdk: Message.role (changed)')
    expect(narrowed.code).toBe(1)
  })

  it('a member moved to an interface the interface now extends (through Omit) is still there; one the Omit leaves out is removed', async () => {
    const dir = copyAtRelease()
    edit(dir, REPORT, 'export interface ClientOptions {', "export interface ClientOptions extends Omit<RequestOptions, 'signal'> {")
    edit(dir, REPORT, /(export interface ClientOptions [^}]*?)\r\n\s*timeout\?: number \| undefined;/, '$1')
    // Moved with its alias spelled out (LogLevel gone): the same type.
    edit(dir, REPORT, /(export interface ClientOptions [^}]*?)\r\n\s*logLevel\?: LogLevel \| undefined;/, '$1')
    edit(dir, REPORT, /\/\/ @public\r\nexport type LogLevel = [^\r\n]*\r\n\r\n/, '')
    edit(
      dir,
      REPORT,
      /(export interface RequestOptions \{)/,
      "$1\r\n    logLevel?: 'off' | 'error' | 'warn' | 'info' | 'debug' | undefined;",
    )
    const ran = await gate(dir, ...quick)
    expect(ran.output).not.toContain('ClientOptions.timeout')
    expect(ran.output).not.toContain('ClientOptions.logLevel')
    expect(ran.output).toContain('breaking   chat-service-sdk: LogLevel (removed)')
    edit(dir, REPORT, "Omit<RequestOptions, 'signal'>", "Omit<RequestOptions, 'signal' | 'timeout'>")
    expect((await gate(dir, ...quick)).output).toContain('breaking   chat-service-sdk: ClientOptions.timeout (removed)')
  })

  it('a declaration that gains a namespace of its name is an addition', async () => {
    const dir = copyAtRelease()
    edit(
      dir,
      REPORT,
      /(export interface RateLimitStore \{[^}]*\}\r\n)/,
      '$1\r\n// @public\r\nexport namespace RateLimitStore {\r\n    export type Grant = number;\r\n}\r\n',
    )
    const ran = await gate(dir, ...quick)
    expect(ran.output).toContain('additive   chat-service-sdk: RateLimitStore (merged with a new namespace)')
    expect(ran.output).not.toContain('breaking')
  })

  it('a newly @deprecated member needs a "Deprecated" entry naming it', async () => {
    const dir = copyAtRelease()
    edit(dir, REPORT, /\/\/ @public\r\nexport const MAX_SCANS/, '// @public @deprecated\r\nexport const MAX_SCANS')
    const without = await gate(dir, ...quick)
    expect(without.output).toContain('MAX_SCANS is newly @deprecated')
    expect(without.code).toBe(1)
    unreleased(dir, 'Deprecated', '`MAX_SCANS`: the scan count is no longer a knob; removed in 0.5.')
    expect((await gate(dir, ...quick)).code).toBe(0)
  })
})

describe("the last release's consumer fixtures against today's types", () => {
  it("compile against today's src/ types: the repository as it is passes the gate", async () => {
    // The package as sources (no build): package.json `types` into src/.
    const pkg = temp('release-check-src-package-')
    symlinkSync(join(root, 'src'), join(pkg, 'src'), 'dir')
    const types = (file: string): { types: string } => ({ types: `./src/${file}` })
    write(
      pkg,
      'package.json',
      JSON.stringify({
        name: 'chat-service-sdk',
        type: 'module',
        exports: { '.': types('index.ts'), './testing': types('testing/index.ts'), './testing/msw': types('testing/msw.ts') },
      }),
    )
    const ran = await gate(copyOfRepository(), '--no-pack', '--package', pkg)
    // 0.4 removed names 0.3's fixtures import (DEFAULT_MAX_RETRIES, ExpiresIn, ...): each error must
    // be a break a "Breaking" entry names.
    expect(ran.output).toMatch(
      /0\.3\.0's consumer fixtures \(metadata-misuse\.ts, misuse\.ts, msw-types\.ts, sample\.ts\) against today's types: \d+ errors/,
    )
    expect(ran.output).not.toContain('no longer compiles')
    expect(ran.output).toMatch(/release:check: ok\n$/)
    expect(ran.code).toBe(0)
  }, 120_000)

  describe('a fixture that no longer compiles', () => {
    let dir: string
    let pkg: string
    beforeAll(() => {
      // A small stand-in for the package and one fixture, so that the compile takes a second.
      dir = copyAtRelease()
      const fixtures = join(dir, `api/releases/${LAST}/consumer-fixtures`)
      rmSync(fixtures, { recursive: true })
      mkdirSync(fixtures)
      write(
        fixtures,
        'uses.ts',
        "import { ChatServiceClient } from 'chat-service-sdk'\nexport const page = new ChatServiceClient().agents.list()\n",
      )
      pkg = temp('release-check-package-')
      mkdirSync(join(pkg, 'dist'))
      write(
        pkg,
        'package.json',
        JSON.stringify({ name: 'chat-service-sdk', type: 'module', exports: { '.': { types: './dist/index.d.ts' } } }),
      )
      // Planted: Agents.list's params became required.
      write(
        pkg,
        'dist/index.d.ts',
        'export declare class Agents { list(params: { limit?: number }): Promise<unknown> }\nexport declare class ChatServiceClient { readonly agents: Agents }\n',
      )
    })

    it('fails the gate, naming the API its statement uses', async () => {
      const ran = await gate(dir, '--no-pack', '--package', pkg)
      expect(ran.output).toContain("0.3.0's fixture uses.ts:2 no longer compiles (TS2554: Expected 1 arguments, but got 0.)")
      expect(ran.output).toContain('it involves Agents.list, ChatServiceClient, ChatServiceClient.agents')
      expect(ran.code).toBe(1)
    }, 120_000)

    it('a name no longer exported is matched by that name alone, not by the other names its import brings', async () => {
      const fixture = join(dir, `api/releases/${LAST}/consumer-fixtures/gone.ts`)
      writeFileSync(
        fixture,
        "import { ChatServiceClient, GONE_LIMIT } from 'chat-service-sdk'\nexport const both = [ChatServiceClient, GONE_LIMIT]\n",
      )
      const changelog = read(dir, 'CHANGELOG.md')
      try {
        unreleased(dir, 'Changed', 'Breaking (`ChatServiceClient`, `Agents.list`): something else.')
        const ran = await gate(dir, '--no-pack', '--package', pkg)
        expect(ran.output).toContain(
          "gone.ts:1 no longer compiles (TS2305: Module '\"chat-service-sdk\"' has no exported member 'GONE_LIMIT'.)",
        )
        expect(ran.output).toContain('it involves GONE_LIMIT\n')
        expect(ran.code).toBe(1)
      } finally {
        rmSync(fixture)
        write(dir, 'CHANGELOG.md', changelog)
      }
    }, 120_000)

    it('a package whose types changed since the last run is compiled as it is now (the gate keeps parsed files between runs)', async () => {
      const types = join(pkg, 'dist/index.d.ts')
      const planted = readFileSync(types, 'utf8')
      try {
        write(pkg, 'dist/index.d.ts', planted.replace('list(params: {', 'list(params?: {'))
        const ran = await gate(dir, '--no-pack', '--package', pkg)
        expect(ran.output).not.toContain('no longer compiles')
        expect(ran.code).toBe(0)
      } finally {
        write(pkg, 'dist/index.d.ts', planted)
      }
    }, 120_000)

    it('passes once a "Breaking" entry names that API (and the version is the next minor)', async () => {
      unreleased(dir, 'Changed', 'Breaking (`Agents.list`): `params` is required.')
      const ran = await gate(dir, '--no-pack', '--package', pkg)
      expect(ran.output).toContain('the next release must be 0.4.0 or later')
      expect(ran.code).toBe(0)
    }, 120_000)
  })
})
