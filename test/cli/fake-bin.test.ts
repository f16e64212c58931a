// `chat-service-fake`, the package's first bin, as a user installs it (the packed tarball): its
// `--version` is the package's, read from the installed package.json when it runs (the bin does
// not carry a copy of package.json, which would go stale or ship the repository's scripts), and
// its compression flags work from the build. test/testing/cli.test.ts covers the rest, in-process.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installPacked, type Installed } from './helpers.ts'

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

let installed: Installed
/** The file package.json `bin` names for `chat-service-fake`, in the installed package. */
let bin: string

beforeAll(async () => {
  installed = await installPacked()
  const pkg = join(installed.dir, 'node_modules', 'chat-service-sdk')
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { bin: Record<string, string> }
  bin = join(pkg, manifest.bin['chat-service-fake'] ?? 'missing')
}, 120_000)

afterAll(() => {
  installed.remove()
})

function run(args: readonly string[]) {
  const child = spawn(process.execPath, [bin, ...args], { cwd: installed.dir, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exit = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }))
  return { child, exit }
}

describe('chat-service-fake, installed from the packed tarball', () => {
  it('--version prints the installed package’s version, read from its package.json (not bundled)', async () => {
    expect(await run(['--version']).exit).toEqual({ code: 0, stdout: `chat-service-fake ${VERSION}\n`, stderr: '' })
    const built = readFileSync(bin, 'utf8')
    expect(built).not.toContain('"devDependencies"')
    expect(built).not.toContain(`"version": "${VERSION}"`)
  })

  it('--compression br --compression-min-bytes 0 serves br on a small body', async () => {
    const started = run(['--port', '0', '--json', '--compression', 'br', '--compression-min-bytes', '0'])
    try {
      const [line] = (await once(createInterface({ input: started.child.stdout }), 'line')) as [string]
      const { baseUrl, keyId, keySecret } = JSON.parse(line) as { baseUrl: string; keyId: string; keySecret: string }
      const res = await request(`${baseUrl}/rest/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip, br' },
        body: JSON.stringify({ keyId, keySecret, userId: 'ext_00001' }),
      })
      await res.body.dump()
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-encoding']).toBe('br')
    } finally {
      started.child.kill('SIGTERM')
      expect((await started.exit).code).toBe(0)
    }
  })
})
