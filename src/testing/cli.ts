#!/usr/bin/env node
/**
 * `chat-service-fake`, the package's command (package.json `bin`): the fake Chat Service on
 * loopback with a generated dataset, for local development. This file hands the process (its
 * arguments, output, exit status and signals) to command.ts, where the logic is. Usage:
 * `npx chat-service-fake --help`; guide: TESTING.md.
 *
 * Exit status: 0 after Ctrl-C (SIGINT) or SIGTERM, 1 when the server cannot start (e.g. the port
 * is taken), 2 for bad arguments.
 *
 * @module
 */
import {} from '../engine-check.ts' // first: refuses an unsupported Node.js with one clear line
import { runCommand, stopOnSignals } from './command.ts'

const output = { out: (text: string) => process.stdout.write(text), err: (text: string) => process.stderr.write(text) }

runCommand(process.argv.slice(2), output)
  .then((result) => {
    if ('exitCode' in result) process.exitCode = result.exitCode
    else void stopOnSignals(result, process, output)
  })
  .catch((error: unknown) => {
    process.stderr.write(`chat-service-fake: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  })
