import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const entry = fileURLToPath(new URL('../../src/testing/index.ts', import.meta.url))

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
  it('the testing entry works without msw; handlers() and createMswNetwork() explain what is missing', async () => {
    const out = await withoutMsw(`
      const fake = m.createFakeChatService({ seed: m.generateDataset({ seed: 1, messages: 10, conversations: 2, customerUsers: 2 }) })
      const key = m.generateDataset({ seed: 1 }).companies[0].keys[0]
      const server = await fake.listen()
      const res = await fetch(server.url + '/rest/v1/auth/token', {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...key, userId: 'ext_00001' }),
      })
      console.log('status', res.status)
      await server.close()
      for (const f of [() => fake.handlers('http://chat.test'), () => m.createMswNetwork([])]) {
        try { f(); console.log('no error') } catch (e) { console.log('error:', e.message) }
      }
    `)
    expect(out).toContain('status 200')
    expect(out.match(/error: .*msw mode needs the "msw" package/g)).toHaveLength(2)
    expect(out).not.toContain('no error')
  })

  it('the same script loads msw lazily when it is installed (control)', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--no-warnings', '--input-type=module', '-e', `
        const m = await import(${JSON.stringify(entry)})
        const fake = m.createFakeChatService()
        console.log('handlers', fake.handlers('http://chat.test').length)
        const net = m.createMswNetwork(fake.handlers('http://chat.test'))
        console.log('network', typeof net.enable, typeof net.disable)
      `],
      { timeout: 15_000 },
    )
    expect(stdout).toContain('handlers 1')
    expect(stdout).toContain('network function function')
  })
})
