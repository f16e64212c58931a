#!/usr/bin/env node
/**
 * `chat-service`, the package's command (package.json `bin`): the SDK's jobs from a terminal, a
 * cron line or a CI step. This file hands the process to main.ts, where the logic is; usage:
 * `chat-service --help`, guide: docs/command.md.
 *
 * @module
 */
import {} from '../engine-check.ts' // first: refuses an unsupported Node.js with one clear line
import { enableCompileCache } from 'node:module'
import { main } from './main.ts'

// Before a command loads the SDK, undici and zod (most of its start-up): Node.js keeps their
// compiled code on disk (os.tmpdir()/node-compile-cache, or NODE_COMPILE_CACHE; off with
// NODE_DISABLE_COMPILE_CACHE=1), so each later run skips most of compiling it, as `tsc` does. A
// directory that cannot be written (a read-only file system) only means no cache: it never throws.
enableCompileCache()

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    // A defect of the command itself (main resolves with a status for everything it expects).
    process.stderr.write(`chat-service: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  },
)
