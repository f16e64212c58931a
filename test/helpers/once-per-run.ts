/**
 * What every test file would otherwise make again (the packed tarball, the SDK's bundle), made once
 * per test run: the first caller, in any worker, claims `name` in the run's directory
 * (test/setup/run-directory.ts; `mkdir` is atomic, so one caller of all gets it) and makes it there;
 * the others wait for its result file, renamed into place whole, and get the same path, or the
 * maker's failure.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { inject } from 'vitest'

/** What the maker leaves for the others: the path it made, or why it failed. */
type Result = { readonly path: string } | { readonly error: string }

/**
 * The path `make` returns, made in `<run directory>/<name>` by the first caller of the run; the
 * others wait up to `waitMs` for it. `what` names it in errors ("packing the package").
 */
export async function makeOncePerRun(
  name: string,
  what: string,
  waitMs: number,
  make: (directory: string) => Promise<string>,
): Promise<string> {
  const directory = join(inject('runDirectory'), name)
  const resultFile = join(directory, 'result.json')
  if (!claim(directory)) {
    const deadline = performance.now() + waitMs
    while (!existsSync(resultFile)) {
      if (performance.now() > deadline) throw new Error(`${what}: nothing in ${directory} after ${waitMs} ms`)
      await sleep(20)
    }
    const result = JSON.parse(readFileSync(resultFile, 'utf8')) as Result
    if ('error' in result) throw new Error(`${what} failed (in another test file): ${result.error}`)
    return result.path
  }
  let result: Result
  try {
    result = { path: await make(directory) }
  } catch (error) {
    result = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) }
  }
  writeFileSync(`${resultFile}.partial`, JSON.stringify(result))
  renameSync(`${resultFile}.partial`, resultFile)
  if ('error' in result) throw new Error(result.error)
  return result.path
}

/** Makes `directory`; `false` when it is there already. */
function claim(directory: string): boolean {
  try {
    mkdirSync(directory)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}
