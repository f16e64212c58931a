// `prepack` (npm runs it before `npm pack` and `npm publish`): every file package.json points a user
// at exists (`main`, `module`, `types`, `typesVersions`, `exports`, `bin`), or nothing is packed.
// It checks the disk, which is what a `--no-dts` build breaks; whether `files` lets each one into
// the tarball is the release gate's to check (its file list, scripts/release/package-files.txt).
// `npm start` and the benchmarks build with `tsup --no-dts`, whose clean step removes the
// declarations: a tarball packed after one of them installs and runs, but TypeScript finds no types
// for it (TS7016). `npm run release:check` finds that too (its file list), but `npm publish` does
// not run it. Exits 1, naming each missing file and saying to run `npm run build`.
//
//   node scripts/check-packable.ts [DIR]     DIR: the package's root (default: this repository)
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** Every path a package.json points at (deduplicated, in the order found; globs and `null` targets skipped). */
export function pointedAt(manifest: Record<string, unknown>): string[] {
  const found = new Set<string>()
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      if (!value.includes('*')) found.add(value)
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item)
    } else if (typeof value === 'object' && value !== null) {
      for (const item of Object.values(value)) walk(item)
    }
  }
  for (const field of ['main', 'module', 'types', 'typings', 'typesVersions', 'exports', 'bin']) walk(manifest[field])
  return [...found]
}

/** The paths package.json at `root` points at that do not exist there. */
export function missingFiles(root: string): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>
  return pointedAt(manifest).filter((path) => !existsSync(join(root, path)))
}

if (import.meta.main) {
  const missing = missingFiles(resolve(process.argv[2] ?? join(import.meta.dirname, '..')))
  if (missing.length > 0) {
    process.stderr.write(
      `check-packable: package.json points at ${missing.length === 1 ? 'a file' : `${missing.length} files`} the build did not make: ` +
        `${missing.join(', ')}. Run \`npm run build\` (a full build, declarations included), then pack again.\n`,
    )
    process.exitCode = 1
  }
}
