// The built JavaScript keeps the TSDoc blocks esbuild leaves before class members (`/** ... */`):
// 71 KB of each of dist/index.js and dist/index.cjs, a tenth of the package, that nothing reads.
// Editors and api-extractor read the docs from the declarations (dist/*.d.cts), which keep them; a
// stack trace reads the file and line. This removes them from each built `.js`/`.cjs`, keeping every
// line break (and, where code follows a block on its last line, that line's columns), so that the
// source maps (scripts/line-maps.ts: one mapping per generated line) still map each line. Comments
// are found by parsing (acorn), not by pattern: a `/**` inside a string or template stays. Legal
// comments (`@license`, `@preserve`, `/*!`) and annotations (`@__PURE__`) stay.
import { readFile, writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parse, type Comment } from 'acorn'
import type { Options } from 'tsup'

type TsupPlugin = NonNullable<Options['plugins']>[number]

/** `code` without its TSDoc blocks, every line break kept (see the file's comment). */
export function withoutDocComments(code: string, sourceType: 'module' | 'script'): string {
  const comments: Comment[] = []
  parse(code, { ecmaVersion: 'latest', sourceType, allowHashBang: true, onComment: comments })
  let out = ''
  let from = 0
  for (const comment of comments) {
    if (comment.type !== 'Block' || !comment.value.startsWith('*') || /@license|@preserve|__PURE__|__NO_SIDE_EFFECTS__/.test(comment.value))
      continue
    const text = code.slice(comment.start, comment.end)
    const breaks = text.split('\n').length - 1
    const lastLine = text.slice(text.lastIndexOf('\n') + 1)
    const lineEnd = code.indexOf('\n', comment.end)
    const rest = code.slice(comment.end, lineEnd < 0 ? code.length : lineEnd)
    // Code after the block on its last line keeps its column; otherwise the line is left empty.
    const keepColumns = rest.trim() === '' ? '' : ' '.repeat(breaks === 0 ? text.length : lastLine.length)
    out += code.slice(from, comment.start) + '\n'.repeat(breaks) + keepColumns
    from = comment.end
  }
  return out + code.slice(from)
}

/** Once tsup has written a build: each `.js`/`.cjs` it wrote loses its TSDoc blocks. */
export const docComments: TsupPlugin = {
  name: 'doc-comments',
  async buildEnd({ writtenFiles }) {
    for (const { name } of writtenFiles) {
      if (!/\.c?js$/.test(name)) continue
      const file = resolve(name)
      const code = await readFile(file, 'utf8')
      await writeFile(file, withoutDocComments(code, name.endsWith('.cjs') ? 'script' : 'module'))
    }
  },
}
