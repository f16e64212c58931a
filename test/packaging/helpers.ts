// Helpers of the packaging tests: the package's tarball installed in a temporary consumer
// project, the machine's own (unsupported) Node.js, and running a child process to its end.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll } from 'vitest'
import { unsupportedNodeMessage } from '../../src/engine-check.ts'
import { packedTarball } from '../helpers/packed-tarball.ts'

export const root = fileURLToPath(new URL('../..', import.meta.url))

/** The dependencies (and optional peers) an installed copy of the package loads. */
const DEPENDENCIES = ['undici', 'zod', 'msw', '@mswjs/interceptors']

/**
 * A temporary project whose `node_modules/chat-service-sdk` holds the package as `npm pack` ships
 * it, built by tsup with the project's own config (declarations and source maps left out: not what
 * these tests look at; test/helpers/packed-tarball.ts, the same tarball the `chat-service` tests
 * install, made at most once a run), and whose `node_modules` links the real dependencies, so that
 * an entry that ran undici before the engine check would crash just as it does for a user.
 */
export async function makeConsumer(): Promise<{ dir: string; pkg: string }> {
  const tarball = await packedTarball()
  const dir = mkdtempSync(join(tmpdir(), 'chat-service-sdk-packaging-'))
  const pkg = join(dir, 'node_modules', 'chat-service-sdk')
  mkdirSync(pkg, { recursive: true })
  execFileSync('tar', ['-xzf', tarball, '-C', pkg, '--strip-components=1'])
  for (const name of DEPENDENCIES) {
    const link = join(dir, 'node_modules', ...name.split('/'))
    mkdirSync(join(link, '..'), { recursive: true })
    symlinkSync(join(root, 'node_modules', ...name.split('/')), link, 'dir')
  }
  return { dir, pkg }
}

/**
 * {@link makeConsumer} for a test file: made before its tests, removed after them. `dir` and `pkg`
 * are read in the tests (they throw before the project is made).
 */
export function useConsumer(): { readonly dir: string; readonly pkg: string } {
  let made: { dir: string; pkg: string } | undefined
  beforeAll(async () => {
    made = await makeConsumer()
  }, 120_000)
  afterAll(async () => {
    if (made !== undefined) await rm(made.dir, { recursive: true, force: true })
  })
  const get = (): { dir: string; pkg: string } => {
    if (made === undefined) throw new Error('the consumer project is made in beforeAll')
    return made
  }
  return {
    get dir() {
      return get().dir
    },
    get pkg() {
      return get().pkg
    },
  }
}

/**
 * A Node.js binary older than the package's floor: this machine's own `node` (Node 20), found on
 * PATH outside any node_modules (npm puts the project's pinned Node 24 first on PATH).
 * `CHAT_SERVICE_SDK_OLD_NODE` names another. Throws when there is none: the test must not pass
 * without having run.
 */
export function findUnsupportedNode(): { path: string; version: string } {
  const candidates = process.env.CHAT_SERVICE_SDK_OLD_NODE
    ? [process.env.CHAT_SERVICE_SDK_OLD_NODE]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter((dir) => dir !== '' && !dir.split(sep).includes('node_modules'))
        .map((dir) => join(dir, 'node'))
  const seen: string[] = []
  for (const path of candidates) {
    if (!existsSync(path) || realpathSync(path) === realpathSync(process.execPath)) continue
    const { stdout, status } = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' })
    const version = stdout.trim()
    seen.push(`${path} (${status === 0 ? `v${version}` : 'does not run'})`)
    if (status === 0 && unsupportedNodeMessage(version) !== undefined) return { path, version: `v${version}` }
  }
  throw new Error(
    `No Node.js older than the package's floor on PATH outside node_modules (found: ${seen.join(', ') || 'none'}). ` +
      'These tests run the build on one (this machine kind ships Node 20); set CHAT_SERVICE_SDK_OLD_NODE=/path/to/node.',
  )
}

/** What a finished child process left. */
export interface Ran {
  status: number | null
  stdout: string
  stderr: string
}

/** Runs `node args...` in `cwd` to its end (killed after `timeoutMs`), with a clean Node environment. */
export function run(node: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 20_000): Promise<Ran> {
  const { NODE_OPTIONS: _options, NODE_PATH: _path, ...inherited } = process.env
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { cwd, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const guard = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${node} ${args.join(' ')} did not exit within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`))
    }, timeoutMs)
    child.on('error', reject)
    child.on('close', (status) => {
      clearTimeout(guard)
      resolve({ status, stdout, stderr })
    })
  })
}
