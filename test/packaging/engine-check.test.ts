// On a Node.js older than the `engines` floor, loading the package fails with one clear line (the
// version found and the version needed) instead of undici's `TypeError: Cannot read properties of
// undefined (reading 'bind')` (issue 11). The build is run now and loaded by this machine's own
// Node 20, by `import` and by `require`, through every entry point, as an installed package.
import { mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { build as esbuild } from 'esbuild'
import { describe, expect, it } from 'vitest'
import { MIN_NODE_VERSION, unsupportedNodeMessage } from '../../src/engine-check.ts'
import { findUnsupportedNode, root, run, useConsumer } from './helpers.ts'

const ENTRIES = ['chat-service-sdk', 'chat-service-sdk/testing', 'chat-service-sdk/testing/msw'] as const
const LOADERS = {
  import: (entry: string) => ['--input-type=module', '-e', `import ${JSON.stringify(entry)}; console.log('loaded')`],
  require: (entry: string) => ['-e', `require(${JSON.stringify(entry)}); console.log('loaded')`],
} as const
const CASES = ENTRIES.flatMap((entry) => (['import', 'require'] as const).map((loader) => ({ entry, loader })))

const oldNode = findUnsupportedNode()
const consumer = useConsumer()

/** Asserts that a run failed with the one clear line and nothing of undici's crash. */
function expectRefused(result: { status: number | null; stdout: string; stderr: string }): void {
  expect(result.status, result.stderr).not.toBe(0)
  expect(result.stdout).not.toContain('loaded')
  const lines = result.stderr.split('\n').filter((line) => line.includes('chat-service-sdk needs'))
  expect(lines, result.stderr).toHaveLength(1)
  expect(lines[0]).toContain(`chat-service-sdk needs Node.js >= ${MIN_NODE_VERSION}; this is Node.js ${oldNode.version}. Upgrade Node.js`)
  expect(result.stderr).not.toMatch(/node_modules[\\/]undici|TypeError|Cannot find module/)
}

describe(`on ${oldNode.version} (${oldNode.path}), older than the floor`, () => {
  it.each(CASES)('$loader of $entry fails with one line naming both versions', async ({ entry, loader }) => {
    expectRefused(await run(oldNode.path, LOADERS[loader](entry), consumer.dir))
  })

  it('an app that bundles the package (esbuild, package.json `sideEffects`) keeps the check, and runs it first', async () => {
    const outfile = join(consumer.dir, 'app.cjs')
    await esbuild({
      stdin: { contents: "import { VERSION } from 'chat-service-sdk'; console.log('loaded', VERSION)", resolveDir: consumer.dir },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile,
      logLevel: 'silent',
    })
    expectRefused(await run(oldNode.path, [outfile], consumer.dir))
    const supported = await run(process.execPath, [outfile], consumer.dir)
    expect(supported.stdout, supported.stderr).toMatch(/^loaded \d+\.\d+\.\d+/)
  })
})

describe(`the package's commands on ${oldNode.version}`, () => {
  it.each([
    ['chat-service', 'dist/cli/index.cjs'],
    ['chat-service-fake', 'dist/testing/cli.js'],
  ])('%s, started through a link as npm installs it: that one line, prefixed with its name, exit 1, no stack trace', async (bin, file) => {
    const link = join(consumer.dir, 'node_modules', '.bin', bin)
    mkdirSync(dirname(link), { recursive: true })
    rmSync(link, { force: true })
    symlinkSync(relative(dirname(link), join(consumer.pkg, file)), link)
    const result = await run(oldNode.path, [link, '--version'], consumer.dir)
    expect(result).toEqual({ status: 1, stdout: '', stderr: `${bin}: ${unsupportedNodeMessage(oldNode.version)}\n` })
  })
})

describe(`on the project's Node ${process.version}, at or above the floor`, () => {
  it.each(CASES)('$loader of $entry loads (the check refuses nothing supported)', async ({ entry, loader }) => {
    const result = await run(process.execPath, LOADERS[loader](entry), consumer.dir)
    expect(result.stderr).toBe('')
    expect(result.stdout).toBe('loaded\n')
    expect(result.status).toBe(0)
  })
})

describe('the build', () => {
  // An ESM file evaluates every `import` before any of its code, so the check must be the first
  // import of each entry file; in CommonJS, the first require().
  it.each([
    ['index.js', './engine-check.js'],
    ['testing/index.js', '../engine-check.js'],
    ['testing/msw.js', '../engine-check.js'],
  ])('dist/%s imports %s before anything else', (file, check) => {
    const code = readFileSync(join(consumer.pkg, 'dist', file), 'utf8')
    const imports = [...code.matchAll(/^import\b[^"']*["']([^"']+)["']/gm)].map((match) => match[1])
    expect(imports.length).toBeGreaterThan(1)
    expect(imports[0]).toBe(check)
  })

  it.each([
    ['index.cjs', './engine-check.cjs'],
    ['testing/index.cjs', '../engine-check.cjs'],
    ['testing/msw.cjs', '../engine-check.cjs'],
  ])('dist/%s requires %s before anything else', (file, check) => {
    const code = readFileSync(join(consumer.pkg, 'dist', file), 'utf8')
    const requires = [...code.matchAll(/\brequire\(["']([^"']+)["']\)/g)].map((match) => match[1])
    expect(requires.length).toBeGreaterThan(1)
    expect(requires[0]).toBe(check)
  })

  it('package.json `sideEffects` names the check files, which exist, so that bundlers keep them', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { sideEffects: unknown }
    // (and the module the browser and edge conditions resolve to, which is kept for its throw: test/testing/bundles.test.ts)
    expect(pkg.sideEffects).toEqual(['./dist/engine-check.js', './dist/engine-check.cjs', './dist/unsupported-runtime.cjs'])
    for (const file of ['engine-check.js', 'engine-check.cjs'])
      expect(readFileSync(join(consumer.pkg, 'dist', file), 'utf8')).toContain(MIN_NODE_VERSION)
  })
})

describe('the floor', () => {
  it('is the one package.json `engines` states', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }
    const [, major, minor = '0', patch = '0'] = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(pkg.engines.node) ?? []
    expect(`${major}.${minor}.${patch}`).toBe(MIN_NODE_VERSION)
  })

  it.each(['22.19.0', '22.19.1', '22.20.0', '23.0.0', '24.11.1', '26.0.0', '100.0.0'])('%s is supported', (version) => {
    expect(unsupportedNodeMessage(version)).toBeUndefined()
  })

  it.each(['22.18.9', '22.0.0', '21.99.99', '20.20.2', '18.0.0', '0.10.48'])('%s is refused with its version and the floor', (version) => {
    expect(unsupportedNodeMessage(version)).toBe(
      `chat-service-sdk needs Node.js >= 22.19.0; this is Node.js v${version}. ` +
        'Upgrade Node.js to 22.19.0 or later (its HTTP client, undici 8, does not load on older versions).',
    )
  })
})
