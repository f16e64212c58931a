// `npm pack` and `npm publish` refuse a build without its declarations (scripts/check-packable.ts,
// package.json `prepack`): after `npm start` or a benchmark (`tsup --no-dts`), a packed tarball
// would install without types. The check runs in a copy of the package's manifest beside a dist/
// made here; one `npm pack` runs it as npm does (the CI's pack step and the release gate pack a
// full build with it).
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { missingFiles, pointedAt } from '../../scripts/check-packable.ts'

const root = join(import.meta.dirname, '../..')
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>
const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A package directory with the repository's package.json, its prepack script, and `files` made (empty). */
function packageWith(files: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'packable-'))
  dirs.push(dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest))
  mkdirSync(join(dir, 'scripts'))
  writeFileSync(join(dir, 'scripts/check-packable.ts'), readFileSync(join(root, 'scripts/check-packable.ts')))
  for (const file of files) {
    if (file === './package.json') continue
    mkdirSync(join(dir, dirname(file)), { recursive: true })
    writeFileSync(join(dir, file), '')
  }
  return dir
}

const everything = pointedAt(manifest)
const declarations = everything.filter((file) => /\.d\.c?ts$/.test(file))

describe('prepack: a build without its declarations is not packed', () => {
  it('finds every entry point: code, declarations and bins', () => {
    expect(everything).toEqual(
      expect.arrayContaining([
        './dist/index.js',
        './dist/index.cjs',
        './dist/index.d.ts',
        './dist/index.d.cts',
        './dist/testing/msw.d.cts',
      ]),
    )
    expect(everything).toEqual(expect.arrayContaining(['dist/cli/index.cjs', 'dist/testing/cli.js', './package.json']))
    expect(declarations.length).toBeGreaterThanOrEqual(6)
  })

  it('a full build: nothing missing', () => {
    expect(missingFiles(packageWith(everything))).toEqual([])
  })

  it('a build made with --no-dts: `npm pack` exits 1 naming the declarations and `npm run build`', () => {
    const dir = packageWith(everything.filter((file) => !declarations.includes(file)))
    expect(missingFiles(dir)).toEqual(declarations)
    const packed = spawnSync('npm', ['pack', '--dry-run'], { cwd: dir, encoding: 'utf8' })
    expect(packed.status).not.toBe(0)
    expect(packed.stderr).toContain('check-packable: package.json points at')
    expect(packed.stderr).toContain('./dist/index.d.ts')
    expect(packed.stderr).toContain('Run `npm run build`')
  })
})
