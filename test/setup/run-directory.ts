// Global set-up (vitest.config.ts `globalSetup`): one temporary directory for the whole run, given to
// every test file as `inject('runDirectory')` and removed when the run ends. What is costly and the
// same for every file is made there once per run by whichever file needs it first: the packed
// tarball of the `chat-service` tests (test/cli/helpers.ts, `packedTarball`), some 5 s of CPU that
// each of nine files used to spend again, and the SDK bundled into one module for the children that
// run examples from source (test/helpers/sdk-bundle.ts). Nothing is made here: a run of files that
// need none of it pays nothing.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A directory that lives as long as the test run, shared by every worker. */
    runDirectory: string
  }
}

export default function setup(project: TestProject): () => void {
  const directory = mkdtempSync(join(tmpdir(), 'chat-service-sdk-test-run-'))
  project.provide('runDirectory', directory)
  return () => {
    rmSync(directory, { recursive: true, force: true })
  }
}
