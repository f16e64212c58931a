// Bundles for the edge (issue 21): bundled for a browser, a web worker or an edge runtime, the
// package resolves (export conditions browser, worker, edge-light, workerd) to a small module whose
// import throws the SDK's own message, instead of failing the build with errors about `util` or
// `diagnostics_channel` that do not mention the SDK. Each condition is bundled with esbuild from a
// freshly built copy of the package installed in a temporary project, and the bundle is run with
// that runtime's globals. Node.js keeps resolving the real SDK.
import { runInNewContext } from 'node:vm'
import { build, type BuildOptions, type Metafile } from 'esbuild'
import { describe, expect, it } from 'vitest'
import { useConsumer } from '../packaging/helpers.ts'

const consumer = useConsumer()

const APP = `
import { ChatServiceClient } from 'chat-service-sdk'
export const client = new ChatServiceClient({ baseUrl: 'https://chat.example.com', keyId: 'key', keySecret: 'secret' })
`

/** Bundles APP as `options` say; the output, the package files it holds, and esbuild's messages. */
async function bundle(options: BuildOptions): Promise<{ code: string; packageFiles: string[]; errors: number; warnings: string[] }> {
  const result = await build({
    stdin: { contents: APP, resolveDir: consumer.dir, loader: 'js' },
    bundle: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
    format: 'iife',
    ...options,
  })
  const inputs = Object.keys((result.metafile as Metafile).inputs)
  return {
    code: result.outputFiles?.[0]?.text ?? '',
    packageFiles: inputs.filter((file) => file.includes('node_modules/')).map((file) => file.slice(file.indexOf('node_modules/'))),
    errors: result.errors.length,
    warnings: result.warnings.map((w) => w.text),
  }
}

/** Runs a bundle in a fresh context with `globals`; the error it throws (it must throw). */
function errorOf(code: string, globals: Record<string, unknown>): Error {
  try {
    runInNewContext(code, { ...globals })
  } catch (error) {
    return error as Error
  }
  throw new Error('the bundle ran without throwing')
}

const SERVER_ONLY =
  "chat-service-sdk runs on a server only (Node.js 22.19 or later): every request carries your API key secret, which must never reach an end user's device (spec, Authentication 4), and every GET carries a JSON body, which fetch() cannot send."

const CONDITIONS = [
  { condition: 'browser', globals: { window: {}, document: {} }, where: 'a browser' },
  { condition: 'worker', globals: { self: {}, WorkerGlobalScope: function WorkerGlobalScope() {} }, where: 'a web worker' },
  { condition: 'edge-light', globals: { EdgeRuntime: 'edge-runtime' }, where: 'an edge runtime' },
  { condition: 'workerd', globals: { navigator: { userAgent: 'Cloudflare-Workers' } }, where: 'an edge runtime' },
] as const

describe('export conditions for browsers, workers and edge runtimes', () => {
  it.each(CONDITIONS)(
    '$condition: the bundle builds, holds only the small module, and its import throws the SDK’s message',
    async ({ condition, globals, where }) => {
      // esbuild's browser platform applies `browser` itself; an edge bundler names its condition.
      const options: BuildOptions =
        condition === 'browser' ? { platform: 'browser' } : { platform: 'neutral', conditions: [condition], mainFields: ['module', 'main'] }
      const out = await bundle(options)
      expect(out.errors).toBe(0)
      expect(out.packageFiles).toEqual(['node_modules/chat-service-sdk/dist/unsupported-runtime.cjs'])
      expect(out.code.length).toBeLessThan(8_000)
      // The one warning names the module, so the build output already points at the reason.
      expect(out.warnings).toEqual([expect.stringContaining('unsupported-runtime.cjs" has no exports') as unknown])
      const error = errorOf(out.code, globals)
      expect(error.message).toContain(`chat-service-sdk cannot run in ${where}. ${SERVER_ONLY}`)
      expect(error.message).toContain('Issue chat tokens on your server and send only the token to the browser or app.')
    },
  )

  it('require() under the browser condition gets the same module', async () => {
    const out = await build({
      stdin: { contents: "module.exports = require('chat-service-sdk')", resolveDir: consumer.dir, loader: 'js' },
      bundle: true,
      write: false,
      metafile: true,
      logLevel: 'silent',
      platform: 'browser',
      format: 'iife',
    })
    expect(Object.keys(out.metafile.inputs).filter((f) => f.includes('node_modules/'))).toEqual([
      expect.stringMatching(/node_modules\/chat-service-sdk\/dist\/unsupported-runtime\.cjs$/) as unknown,
    ])
    expect(errorOf(out.outputFiles[0]!.text, { window: {}, document: {} }).message).toContain('chat-service-sdk cannot run in a browser.')
  })

  it('a browser build loaded by Node.js (e.g. Jest’s jsdom environment resolves `browser`) says how to resolve it for Node.js', async () => {
    const out = await bundle({ platform: 'browser' })
    const error = errorOf(out.code, { process: { versions: { node: '24.0.0' } }, window: {}, document: {} })
    expect(error.message).toContain(
      'a bundler or test runner resolved the package for a browser or edge runtime, and Node.js loaded that build',
    )
    expect(error.message).toContain("testEnvironmentOptions: { customExportConditions: ['node', 'node-addons'] }")
  })

  it('Node.js still gets the SDK: a bundle for platform node holds the real client', async () => {
    const out = await bundle({ platform: 'node', format: 'esm', external: ['undici', 'zod'] })
    expect(out.errors).toBe(0)
    expect(out.packageFiles).toContain('node_modules/chat-service-sdk/dist/index.js')
    expect(out.packageFiles).not.toContain('node_modules/chat-service-sdk/dist/unsupported-runtime.cjs')
  })
})
