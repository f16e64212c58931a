// Builds the package as it was at a git ref, for `npm run bench -- --baseline DIR`: that version of
// the SDK against today's, side by side in one run. It is built with the ref's own tsup config but
// runs on today's node_modules (the same undici and zod), so a difference is the SDK's own code.
//
//   npm run bench:baseline -- 0b1e0b1        (the 0.2.0 release) prints the directory to pass:
//   npm run bench -- --only request --baseline .bench-out/baseline-0b1e0b1
//
// The ref is checked out in a temporary git worktree (.bench-out/baseline-<ref>-source), removed
// afterwards, also after Ctrl-C; if a run is killed outright, the next run of the same ref removes
// it (or: git worktree remove --force .bench-out/baseline-<ref>-source).
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const ref = process.argv[2]
if (ref === undefined || ref.startsWith('-')) {
  process.stderr.write('usage: npm run bench:baseline -- REF   (a commit, tag or branch)\n')
  process.exit(2)
}
const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim()
const commit = git('rev-parse', '--short', `${ref}^{commit}`)
const out = join(root, '.bench-out', `baseline-${commit}`)
const source = join(root, '.bench-out', `baseline-${commit}-source`)
/** Built here first, then put in place of `out`: a build that fails or is stopped leaves the last good one. */
const staging = `${out}-staging`

/** Removes this script's worktree (only it), whether git still lists it or not. */
function removeWorktree(): void {
  const listed = git('worktree', 'list', '--porcelain')
    .split('\n')
    .some((line) => line === `worktree ${source}`)
  if (listed) git('worktree', 'remove', '--force', source)
  rmSync(source, { recursive: true, force: true })
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    removeWorktree()
    rmSync(staging, { recursive: true, force: true })
    process.exit(signal === 'SIGINT' ? 130 : 143)
  })
}

removeWorktree() // left by a run that was killed
rmSync(staging, { recursive: true, force: true })
git('worktree', 'add', '--detach', source, commit)
try {
  symlinkSync(join(root, 'node_modules'), join(source, 'node_modules'), 'dir')
  // tsup's own API with the ref's tsup.config.ts (found from the working directory); no declarations.
  const script = `import { build } from 'tsup'; await build({ outDir: ${JSON.stringify(join(staging, 'dist'))}, dts: false, sourcemap: false, silent: true })`
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: source, stdio: 'inherit' })
  mkdirSync(staging, { recursive: true })
  copyFileSync(join(source, 'package.json'), join(staging, 'package.json'))
  if (existsSync(out)) rmSync(out, { recursive: true, force: true })
  renameSync(staging, out)
} finally {
  removeWorktree()
}
process.stdout.write(`${out}\n`)
