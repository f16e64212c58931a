/**
 * What `import 'chat-service-sdk'` gives a browser, a web worker or an edge runtime (Vercel
 * `edge-light`, Cloudflare `workerd`): package.json's export conditions of those names resolve the
 * root entry to this module, which throws, on import, an error that says why the SDK cannot run
 * there and what to do (runtime.ts has the messages).
 *
 * Why a module of its own: bundled for a browser or an edge runtime, the Node.js build fails with
 * bundler errors about `util`, `diagnostics_channel`, `zlib`, … that do not mention the SDK. This
 * module imports nothing from Node.js, so a bundle builds,
 * and the first thing it does when it runs is say what is wrong. It is built as CommonJS, so that
 * a bundle that imports the SDK's names (`import { ChatServiceClient } from 'chat-service-sdk'`)
 * builds: a bundler cannot check a CommonJS module's names at build time (esbuild warns that the
 * import "will always be undefined" and names this file), whereas an ES module without the SDK's
 * exports would fail the build with "No matching export" instead of this message.
 *
 * Bun has no condition here: it loads the Node.js build, and the client's constructor refuses it
 * with its own message (Bun checks a CommonJS module's names when an ES module imports them, so
 * this module would fail there with "Export named ... not found" before its message).
 *
 * @packageDocumentation
 */
import { detectRuntime, unsupportedImportMessage } from './runtime.ts'

const bun = (globalThis as { process?: { versions?: { bun?: string } } }).process?.versions?.bun
throw new Error(unsupportedImportMessage(detectRuntime(), bun))
