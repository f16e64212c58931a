// The package as npm would publish it: `npm pack` twice (the same bytes, or the tarball is not
// reproducible and a user's lockfile integrity could not be checked against a rebuild), `npm
// publish --dry-run` (the same file list and integrity: what would be uploaded is what was
// checked), the file list against package-files.txt, and no file carrying package.json's
// development parts (a bundled `import ... from '../package.json'` ships devDependencies and scripts).
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

interface NpmPackResult {
  readonly filename: string
  readonly integrity: string
  readonly unpackedSize: number
  readonly files: readonly { readonly path: string }[]
}

export interface PackCheck {
  /** The first tarball. */
  readonly tarball: string
  readonly files: readonly string[]
  readonly unpackedSize: number
  /** Every problem found, one line each; empty when all is well. */
  readonly problems: readonly string[]
}

/** Packs `root` twice into `workDir` and checks what the file's comment says. */
export function checkPack(root: string, workDir: string, options: { publishDryRun: boolean }): PackCheck {
  const problems: string[] = []
  const pack = (name: string): { result: NpmPackResult; tarball: string } => {
    const dir = join(workDir, name)
    mkdirSync(dir, { recursive: true })
    const [result] = JSON.parse(npm(root, ['pack', '--json', '--pack-destination', dir])) as [NpmPackResult]
    return { result, tarball: join(dir, result.filename) }
  }
  const first = pack('pack-1')
  const second = pack('pack-2')
  if (!readFileSync(first.tarball).equals(readFileSync(second.tarball))) {
    problems.push(
      `npm pack twice gave different bytes (${first.result.integrity} and ${second.result.integrity}): the tarball is not reproducible`,
    )
  }
  const files = first.result.files.map((file) => file.path).sort()
  const expected = expectedFiles(root)
  const missing = expected.filter((pattern) => !files.some((file) => matches(pattern, file)))
  const unexpected = files.filter((file) => !expected.some((pattern) => matches(pattern, file)))
  if (missing.length > 0) problems.push(`the package lacks ${missing.join(', ')} (scripts/release/package-files.txt lists them)`)
  if (unexpected.length > 0) {
    problems.push(
      `the package holds ${unexpected.join(', ')}, which scripts/release/package-files.txt does not list (add them there if they belong)`,
    )
  }
  const development = developmentMarkers(root)
  for (const file of files) {
    if (!/\.(c|m)?js$/.test(file)) continue
    const code = readFileSync(join(root, file), 'utf8')
    const found = development.filter((marker) => code.includes(marker))
    if (found.length > 0)
      problems.push(
        `${file} holds package.json's development parts (${found.slice(0, 3).join(', ')}): read the version from VERSION instead`,
      )
  }
  if (options.publishDryRun) {
    const published = JSON.parse(npm(root, ['publish', '--dry-run', '--json'])) as Record<string, NpmPackResult>
    const result = Object.values(published)[0]
    if (result === undefined) {
      problems.push('npm publish --dry-run --json printed no package')
    } else {
      const publishedFiles = result.files.map((file) => file.path).sort()
      if (publishedFiles.join('\n') !== files.join('\n')) {
        problems.push(`npm publish --dry-run would publish other files than npm pack packs: ${publishedFiles.join(', ')}`)
      }
      if (result.integrity !== first.result.integrity) {
        problems.push(
          `npm publish --dry-run would upload another tarball (${result.integrity}) than the one checked (${first.result.integrity})`,
        )
      }
    }
  }
  return { tarball: first.tarball, files, unpackedSize: first.result.unpackedSize, problems }
}

function npm(cwd: string, args: readonly string[]): string {
  return execFileSync('npm', [...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 })
}

/** package-files.txt: one path a line (`*` matches within one path segment), `#` comments. */
function expectedFiles(root: string): string[] {
  return readFileSync(join(root, 'scripts/release/package-files.txt'), 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter((line) => line !== '')
}

function matches(pattern: string, file: string): boolean {
  const regex = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`)
  return regex.test(file)
}

/** Text that only a copy of package.json would put in a built file: its script command lines and dependency ranges. */
function developmentMarkers(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>
    devDependencies?: Record<string, string>
  }
  return [
    '"devDependencies"',
    ...Object.values(pkg.scripts ?? {}).filter((script) => script.includes(' ')),
    ...Object.entries(pkg.devDependencies ?? {}).map(([name, range]) => `"${name}": "${range}"`),
  ]
}
