// What a test run makes from the repository's files and keeps for the runs after it (the SDK's
// bundles for child processes, the packed tarball of the `chat-service` tests) is kept under a hash
// of those files: the same files, the same hash, and what the run before made is used as it is.
import { createHash } from 'node:crypto'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * 16 hex digits of a SHA-256 of `paths` (from the repository's root; a directory stands for every
 * file under it): each file's path and content, in a fixed order. A path that does not exist counts
 * as such, so that adding the file changes the hash too.
 */
export async function hashOfFiles(paths: readonly string[]): Promise<string> {
  const hash = createHash('sha256')
  const files: string[] = []
  for (const path of paths) {
    const full = join(ROOT, path)
    const info = await stat(full).catch(() => undefined)
    if (info?.isDirectory() === true) {
      for (const name of await readdir(full, { recursive: true })) files.push(join(full, name))
    } else {
      files.push(full)
    }
  }
  for (const file of files.sort()) {
    const info = await stat(file).catch(() => undefined)
    if (info?.isDirectory() === true) continue
    hash.update(relative(ROOT, file)).update('\0')
    hash.update(info === undefined ? '(none)' : await readFile(file)).update('\0')
  }
  return hash.digest('hex').slice(0, 16)
}
