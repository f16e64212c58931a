#!/usr/bin/env node
/**
 * `chat-service-fake`, the package's command (package.json `bin`): the fake Chat Service on
 * loopback with a generated dataset, for local development. This file wires the command
 * (command.ts) to the process: output, exit status, and the signals that stop it. Usage:
 * `npx chat-service-fake --help`; guide: TESTING.md.
 *
 * Exit status: 0 after Ctrl-C (SIGINT) or SIGTERM, 1 when the server cannot start (e.g. the port
 * is taken), 2 for bad arguments.
 *
 * @module
 */
import {} from '../engine-check.ts' // first: refuses an unsupported Node.js with one clear line
import { runCommand } from './command.ts'

async function main(): Promise<void> {
  const result = await runCommand(process.argv.slice(2), {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  })
  if ('exitCode' in result) {
    process.exitCode = result.exitCode
    return
  }
  let stopping = false
  const stop = (): void => {
    // A second Ctrl-C while closing: do not make the user wait.
    if (stopping) process.exit(1)
    stopping = true
    void result.server.close().then(() => {
      if (!result.json) process.stderr.write('chat-service-fake: stopped\n')
      // Started by another Node process with an IPC channel: let the process end.
      if (process.connected) process.disconnect()
    })
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  // Started with an IPC channel (child_process.fork): stop when the parent goes away.
  if (process.connected) process.on('disconnect', stop)
}

main().catch((error: unknown) => {
  process.stderr.write(`chat-service-fake: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exitCode = 1
})
