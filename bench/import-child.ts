// Child process of the import benchmark (bench/import.ts starts it, one per measurement; never by
// hand): imports ONE side and constructs what a user constructs before the first call, and prints
// one JSON line. Nothing but Node's built-ins is loaded before the measured section, so the section
// holds all of the side's module loading (resolution, reading, compiling, evaluating) and its
// constructor. Two calls of `os.freemem()` (libuv's `uv_get_free_memory`) frame the section: under
// callgrind (`--dump-before=uv_get_free_memory`) the second dump is exactly the section.
//   node bench/import-child.ts floor|sdk|sdk-at:DIR
//     floor: `import('undici')`, `import('zod')` and an undici Agent with the SDK pool's settings
//     sdk:   `import('chat-service-sdk')` (the built package) and `new ChatServiceClient({...})`
//     sdk-import: the import alone (no client), to tell the two apart
import os from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const side = process.argv[2] ?? ''
const mark = (): number => os.freemem()

interface SdkModule {
  ChatServiceClient: new (options: { baseUrl: string; keyId: string; keySecret: string }) => { close(): Promise<void> }
}

mark()
const cpu0 = process.cpuUsage()
const t0 = performance.now()
let made: { close?: () => Promise<void> }
if (side === 'floor') {
  const undici = await import('undici')
  const zod = await import('zod')
  if (typeof zod.object !== 'function') throw new Error('zod did not load')
  // The SDK pool's settings (bench/floor.ts; not imported: it loads the SDK).
  made = new undici.Agent({ connections: 64, pipelining: 1, allowH2: false, connect: { timeout: 30_000 } })
} else if (side === 'sdk-import') {
  await import('chat-service-sdk')
  made = {}
} else if (side === 'sdk' || side.startsWith('sdk-at:')) {
  const specifier = side === 'sdk' ? 'chat-service-sdk' : pathToFileURL(join(side.slice('sdk-at:'.length), 'dist', 'index.js')).href
  const sdk = (await import(specifier)) as SdkModule
  made = new sdk.ChatServiceClient({ baseUrl: 'http://127.0.0.1:9', keyId: 'key_import_bench', keySecret: 'secret_import_bench' })
} else {
  throw new Error(`unknown side ${side}: floor, sdk, sdk-import or sdk-at:DIR`)
}
const t1 = performance.now()
const cpu1 = process.cpuUsage()
mark()
await made.close?.()
const cpuUs = cpu1.user - cpu0.user + (cpu1.system - cpu0.system)
// sinceStartMs: from the process's start (performance.timeOrigin) to the end of the section.
process.stdout.write(`${JSON.stringify({ wallMs: t1 - t0, cpuMs: cpuUs / 1000, sinceStartMs: t1 })}\n`)
