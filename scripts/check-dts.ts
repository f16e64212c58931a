// Checks the published declaration files (dist/**/*.d.ts and .d.cts of the entry points, after
// `npm run build`): users read them in their editor, so they name no file of the repository's
// src/ (the package does not ship it: "see src/internal/README.md" means nothing there), and carry
// no orphan doc block: a `/** ... */` that documents nothing (a module's header comment, kept by
// the declaration bundler above the next doc block or an export list) shows up in no editor and
// reads as noise. Exits 1, naming each file, line and block, when it finds one.
//
//   npm run build && node scripts/check-dts.ts
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

const root = join(import.meta.dirname, '..')
const dist = join(root, 'dist')

/** The declaration files of the entry points (the chunks they import included): every .d.ts and .d.cts under dist/. */
function declarationFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return declarationFiles(path)
    return /\.d\.c?ts$/.test(entry.name) ? [path] : []
  })
}

/** What may follow a doc block for it to document something. */
const DECLARATION =
  /^(export\s+)?(declare\s+)?(abstract\s+)?(class|interface|type|const|let|var|function|namespace|enum|readonly|static|private|protected|public|get|set|constructor|async|\[|[\w$]+\s*[?(<:]|[\w$]+\s*$)/

const problems: string[] = []
for (const file of declarationFiles(dist)) {
  const text = readFileSync(file, 'utf8')
  const where = (index: number): string => `${relative(root, file)}:${text.slice(0, index).split('\n').length}`
  for (const match of text.matchAll(/\bsrc\/[\w./-]+/g)) problems.push(`${where(match.index)}: names a repository path, ${match[0]}`)
  for (const match of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const after = text.slice(match.index + match[0].length).trimStart()
    if (!DECLARATION.test(after) || after.startsWith('export {') || after.startsWith('export type {')) {
      const first = match[0].split('\n')[1]?.trim() ?? match[0].slice(0, 60)
      problems.push(`${where(match.index)}: a doc block that documents nothing: ${first.slice(0, 100)}`)
    }
  }
}

if (problems.length > 0) {
  console.error(`The published declarations name repository paths or carry orphan doc blocks:\n${problems.join('\n')}`)
  process.exitCode = 1
} else {
  console.log('Declarations: no repository path, no orphan doc block.')
}
