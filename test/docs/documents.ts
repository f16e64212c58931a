// The package's documentation as the tests of test/docs/ read it: README.md (the npm page), the
// guides under docs/ that it links to, and TESTING.md (the testing kit's guide). One list, so that
// a guide added to docs/ is checked (snippets, links, shipped) without touching a test.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The guides: every markdown file directly under docs/ (docs/api/ is TypeDoc's output, not a guide). */
export function guides(): string[] {
  return readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`)
}

/** Every user document, as paths from the repository's root: README.md, the guides, TESTING.md. */
export function documents(): string[] {
  return ['README.md', ...guides(), 'TESTING.md']
}

export function read(document: string): string {
  return readFileSync(join(ROOT, document), 'utf8')
}

/** A fenced code block of a document. */
export interface Block {
  readonly document: string
  /** 1-based line of the opening fence. */
  readonly line: number
  readonly lang: string
  readonly code: string
  /** The HTML comment on the line before the fence (`<!-- snippet: type-check only -->`), if any. */
  readonly marker: string
}

/** The fenced blocks of `document`, in order. */
export function blocks(document: string): Block[] {
  const lines = read(document).split('\n')
  const found: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] ?? '')
    if (open === null) continue
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && lines[i]?.trim() !== '```'; i++) body.push(lines[i] ?? '')
    const before = lines[start - 1]?.trim() ?? ''
    found.push({ document, line: start + 1, lang: open[1] ?? '', code: body.join('\n'), marker: before.startsWith('<!--') ? before : '' })
  }
  return found
}

/** The `## ` section of `document` titled `heading` (without its heading line), up to the next `## `. */
export function section(document: string, heading: string): string | undefined {
  const text = read(document)
  const start = text.indexOf(`\n## ${heading}\n`)
  if (start < 0) return undefined
  const body = text.indexOf('\n', start + 1) + 1
  const next = text.indexOf('\n## ', body)
  return text.slice(body, next < 0 ? text.length : next)
}

/**
 * The anchors GitHub (and TypeDoc) give a document's headings: lower case, punctuation other than
 * `-` and `_` dropped, spaces made `-`; a repeated heading gets `-1`, `-2`, ... A heading with
 * `code` in it has none here: TypeDoc leaves the code out of its anchor and GitHub keeps it, so a
 * link to one works in one of them only.
 */
export function anchors(document: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  let fenced = false
  for (const line of read(document).split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const heading = fenced ? null : /^#{1,6} (.+)$/.exec(line)
    if (heading === null || heading[1]?.includes('`') === true) continue
    const slug = (heading[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    result.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return result
}
