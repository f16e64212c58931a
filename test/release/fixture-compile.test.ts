// The release gate's compile of the last release's consumer fixtures (scripts/release/fixtures.ts)
// on its own, with a node_modules of our making: the gate gives the repository's, where a
// chat-service-sdk may be installed or linked. The fixtures must compile against the package under
// test alone: an entry point it no longer has is an error, even when that other copy still has it
// (TypeScript, unlike Node.js, looks in the next node_modules up when a package's `exports` lack a
// subpath). A few small declaration files and @types/node: the compile takes a second.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, it } from 'vitest'
import { compileFixtures } from '../../scripts/release/fixtures.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'fixture-compile-'))

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

/** Writes `files` (path: text) under `at`. */
function write(at: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(at, path)), { recursive: true })
    writeFileSync(join(at, path), text)
  }
}

/** A package of declarations, each subpath of `exports` to its `types` file, which declares VERSION. */
function declarations(at: string, version: string, subpaths: readonly string[]): void {
  const file = (subpath: string): string => `${subpath === '.' ? 'index' : subpath.slice(2).replace(/\//g, '-')}.d.ts`
  write(at, {
    'package.json': JSON.stringify({
      name: 'chat-service-sdk',
      version,
      type: 'module',
      exports: Object.fromEntries(subpaths.map((subpath) => [subpath, { types: `./${file(subpath)}` }])),
    }),
    ...Object.fromEntries(subpaths.map((subpath) => [file(subpath), `export declare const VERSION: '${version}'\n`])),
  })
}

it('compiles against the package under test: another chat-service-sdk in the node_modules given is never read, an entry point the package dropped is an error, the other packages resolve', () => {
  // The node_modules given: @types/node (the compile's `types`), another package, and a
  // chat-service-sdk 0.3.0 that still has ./testing.
  const modules = join(dir, 'node_modules')
  mkdirSync(modules)
  symlinkSync(join(root, 'node_modules/@types'), join(modules, '@types'), 'dir')
  write(join(modules, 'other-package'), {
    'package.json': JSON.stringify({ name: 'other-package', type: 'module', exports: { '.': { types: './index.d.ts' } } }),
    'index.d.ts': 'export declare const other: number\n',
  })
  declarations(join(modules, 'chat-service-sdk'), '0.3.0', ['.', './testing'])
  // The package under test: 0.4.0, without ./testing.
  const pkg = join(dir, 'package')
  declarations(pkg, '0.4.0', ['.'])
  const fixtures = join(dir, 'fixtures')
  write(fixtures, {
    'uses.ts': [
      "import { other } from 'other-package'",
      "import { VERSION } from 'chat-service-sdk'",
      "import { VERSION as TESTING } from 'chat-service-sdk/testing'",
      "export const today: '0.4.0' = VERSION",
      'export const all = [other, TESTING]',
      '',
    ].join('\n'),
  })

  const compiled = compileFixtures(fixtures, pkg, modules)

  expect(compiled.files).toEqual(['uses.ts'])
  expect(compiled.errors.map((error) => `${error.where}: TS${error.code}: ${error.message}`)).toEqual([
    "uses.ts:3: TS2307: Cannot find module 'chat-service-sdk/testing' or its corresponding type declarations.",
  ])
}, 60_000)
