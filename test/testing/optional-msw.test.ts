import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const entry = fileURLToPath(new URL('../../src/testing/index.ts', import.meta.url))
const mswEntry = fileURLToPath(new URL('../../src/testing/msw.ts', import.meta.url))

/** Runs a script in a fresh Node in which `msw` and `@mswjs/*` cannot be resolved. */
async function withoutMsw(body: string): Promise<string> {
  const script = `
    import { registerHooks } from 'node:module'
    registerHooks({
      resolve(specifier, context, next) {
        if (/^(msw|@mswjs\\/)/.test(specifier)) {
          throw Object.assign(new Error("Cannot find module '" + specifier + "'"), { code: 'MODULE_NOT_FOUND' })
        }
        return next(specifier, context)
      },
    })
    const m = await import(${JSON.stringify(entry)})
    ${body}
  `
  const { stdout } = await run(process.execPath, ['--no-warnings', '--input-type=module', '-e', script], { timeout: 15_000 })
  return stdout
}

describe('msw is optional', () => {
  it('the testing entry works without msw; only the testing/msw entry needs it', async () => {
    const out = await withoutMsw(`
      const fake = m.createFakeChatService({ seed: m.generateDataset({ seed: 1, messages: 10, conversations: 2, customerUsers: 2 }) })
      const key = m.generateDataset({ seed: 1 }).companies[0].keys[0]
      const server = await fake.listen()
      const res = await fetch(server.url + '/rest/v1/auth/token', {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...key, userId: 'ext_00001' }),
      })
      console.log('status', res.status)
      await server.close()
      console.log('exports', Object.keys(m).sort().join(','))
      try { await import(${JSON.stringify(mswEntry)}); console.log('msw entry loaded') } catch (e) {
        console.log('msw entry:', JSON.stringify({ message: e.message, code: e.code, cause: e.cause?.message }))
      }
    `)
    expect(out).toContain('status 200')
    expect(out).not.toMatch(/exports .*Msw/)
    expect(out).not.toContain('msw entry loaded')
    const error = JSON.parse(/msw entry: (.*)/.exec(out)?.[1] ?? '{}') as { message?: string; code?: string; cause?: string }
    // Names the optional peers and the command that installs them, then Node's own reason.
    expect(error.message).toMatch(
      /^chat-service-sdk\/testing\/msw needs its optional peer dependencies msw \(\^3\) and @mswjs\/interceptors/,
    )
    expect(error.message).toContain('npm install -D msw @mswjs/interceptors')
    expect(error.message).toMatch(/\(Cannot find module '(msw|@mswjs\/interceptors\/http)'\)$/)
    expect(error.code).toBe('MODULE_NOT_FOUND')
    expect(error.cause).toMatch(/^Cannot find module '(msw|@mswjs)/)
  })

  it('with msw installed, the testing/msw entry serves a fake made by the testing entry (control)', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--no-warnings',
        '--input-type=module',
        '-e',
        `
        const m = await import(${JSON.stringify(entry)})
        const msw = await import(${JSON.stringify(mswEntry)})
        const fake = m.createFakeChatService()
        console.log('handlers', msw.createFakeHandlers(fake, 'http://chat.test').length)
        const net = msw.createMswNetwork(msw.createFakeHandlers(fake, 'http://chat.test'))
        console.log('network', typeof net.enable, typeof net.disable)
      `,
      ],
      { timeout: 15_000 },
    )
    expect(stdout).toContain('handlers 1')
    expect(stdout).toContain('network function function')
  })
})
