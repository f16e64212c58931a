// docs/migrating-from-0.2.md, the guide the CHANGELOG's [0.3.0] section links to: every 0.3
// snippet (a ```ts block) type-checks against today's SDK with `strict` and
// `noUncheckedIndexedAccess`, as the README's do: test/docs/snippets.test.ts checks them all in one
// program, and runs them against the fake. The 0.2 snippets (fenced ```typescript: highlighted the same, left alone by
// every test of ```ts blocks) are the code users move away from: not checked, but each must be
// followed by the 0.3 code that replaces it.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { blocks as documentBlocks, documents } from './documents.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const GUIDE = 'docs/migrating-from-0.2.md'

interface Block {
  /** 1-based line of the opening fence. */
  readonly line: number
  /** `ts` (0.3 code) or `typescript` (0.2 code). */
  readonly info: string
  readonly code: string
}

function blocks(): Block[] {
  const lines = readFileSync(join(root, GUIDE), 'utf8').split('\n')
  const found: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S.*)$/.exec(lines[i] ?? '')
    if (fence === null) continue
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i] ?? '')
    found.push({ line: start + 1, info: (fence[1] ?? '').trim(), code: body.join('\n') })
  }
  return found
}

it("CHANGELOG.md's [0.3.0] section links to the guide", () => {
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8')
  const section = changelog.slice(changelog.indexOf('## [0.3.0]'), changelog.indexOf('## [0.2.0]'))
  expect(section).toContain(`(${GUIDE})`)
})

it('every 0.2 snippet is followed by the 0.3 code that replaces it', () => {
  const all = blocks()
  expect(all.filter((block) => block.info === 'typescript').length).toBeGreaterThanOrEqual(6)
  for (const [i, block] of all.entries()) {
    if (block.info === 'typescript') expect({ line: block.line, next: all[i + 1]?.info }).toEqual({ line: block.line, next: 'ts' })
  }
})

// The 0.3 snippets are type-checked (and run) by test/docs/snippets.test.ts, with every ```ts block of
// README.md and docs/: one TypeScript program over src/ for all of them, where this file used to build
// a second one for these seven (some 3 s of CPU). This holds the guide to that list, and its blocks to
// the ones that test reads.
it('every 0.3 snippet is one test/docs/snippets.test.ts type-checks with strict and noUncheckedIndexedAccess', () => {
  expect(documents()).toContain(GUIDE)
  const here = blocks().filter((block) => block.info === 'ts')
  expect(here.length).toBeGreaterThanOrEqual(7)
  const there = documentBlocks(GUIDE).filter((block) => block.lang === 'ts')
  expect(there.map((block) => ({ line: block.line, code: block.code }))).toEqual(
    here.map((block) => ({ line: block.line, code: block.code })),
  )
})
