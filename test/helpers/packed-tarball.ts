// The package's tarball as `npm pack` makes it, for the tests that install the package as a user
// does (the `chat-service` tests, test/cli/helpers.ts; the packaging tests, test/packaging/helpers.ts):
// built at most once per run, and kept between runs under a hash of what it is made of.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { hashOfFiles } from './inputs-hash.ts'
import { makeOncePerRun } from './once-per-run.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))

/**
 * The package's tarball, built and packed at most once per test run (whichever file asks first
 * does it; the others, in this worker or another, wait for it): the package built into a staging
 * directory with the project's tsup config and packed by `npm pack` (which applies package.json
 * `files`). Some 3-5 s of CPU, which each file that installs the command used to spend again, and
 * which a run spends only when what the tarball is made of changed since a run before
 * (`packedFrom`): it is kept in node_modules/.cache/test-packed/ under a hash of those files.
 */
export function packedTarball(): Promise<string> {
  return (packed ??= packOnce())
}
let packed: Promise<string> | undefined

/** Where packed tarballs are kept between runs, and how many. */
const PACKED_CACHE = join(root, 'node_modules/.cache/test-packed')
const KEEP_PACKED = 4

/**
 * What the tarball is made of (paths from the root; a directory stands for its files): the
 * sources, the build's config and plugins (scripts/), the packages (the lock file), the manifest,
 * the documents `pack` copies (docs/*.md, not the API docs TypeDoc writes under docs/) and this
 * file (how it builds and packs).
 */
function packedFrom(): string[] {
  const guides = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'))
  return [
    ...['src', 'scripts', 'tsup.config.ts', 'tsconfig.json', 'package.json', 'package-lock.json'],
    ...['README.md', 'TESTING.md', 'CHANGELOG.md', 'LICENSE', ...guides.map((guide) => `docs/${guide}`), 'test/helpers/packed-tarball.ts'],
  ]
}

async function packOnce(): Promise<string> {
  return makeOncePerRun('packed', 'packing the package', 180_000, async (directory) => {
    const kept = join(PACKED_CACHE, await hashOfFiles(packedFrom()))
    const tarball = join(kept, 'package.tgz')
    if (!existsSync(tarball)) {
      const made = await pack(join(directory, 'staging'))
      // Copied in beside its final name, then renamed: a run at the same time sees it whole or not at all.
      mkdirSync(kept, { recursive: true })
      const partial = mkdtempSync(join(kept, '.copying-'))
      copyFileSync(made, join(partial, 'package.tgz'))
      renameSync(join(partial, 'package.tgz'), tarball)
      rmSync(partial, { recursive: true, force: true })
    }
    const now = new Date()
    utimesSync(kept, now, now)
    forgetOldTarballs(kept)
    return tarball
  })
}

/** Keeps the newest few kept tarballs: a branch switched back to finds its own. */
function forgetOldTarballs(kept: string): void {
  const others = readdirSync(PACKED_CACHE)
    .map((name) => join(PACKED_CACHE, name))
    .filter((path) => path !== kept)
    .map((path) => ({ path, used: statSync(path).mtimeMs }))
    .sort((a, b) => b.used - a.used)
  for (const { path } of others.slice(KEEP_PACKED - 1)) rmSync(path, { recursive: true, force: true })
}

/** Builds the package into `staging` and packs it there; resolves with the tarball's path. */
async function pack(staging: string): Promise<string> {
  mkdirSync(join(staging, 'docs'), { recursive: true })
  // LICENSE too: npm ships it whatever package.json `files` says (scripts/release/package-files.txt).
  for (const file of ['package.json', 'README.md', 'TESTING.md', 'CHANGELOG.md', 'LICENSE'])
    copyFileSync(join(root, file), join(staging, file))
  for (const guide of readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')))
    copyFileSync(join(root, 'docs', guide), join(staging, 'docs', guide))
  // tsup (and rollup, esbuild's API, its config loader) loaded here, by the one file of the run that
  // packs, not at import by every file that installs the command: some 0.15 s of CPU in each worker.
  const { build } = await import('tsup')
  await build({ outDir: join(staging, 'dist'), dts: false, sourcemap: false, silent: true })
  const packedName = execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', staging], {
    cwd: staging,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  return join(staging, packedName.trim().split('\n').at(-1) ?? '')
}
