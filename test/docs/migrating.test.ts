// docs/migrating-from-0.2.md, the guide the CHANGELOG's [0.3.0] section links to: every 0.3
// snippet (a ```ts block) type-checks against today's SDK with `strict` and
// `noUncheckedIndexedAccess`, as the README's do (test/docs/readme-snippets.test.ts), with the same
// globals (a `client`). The 0.2 snippets (fenced ```typescript: highlighted the same, left alone by
// every test of ```ts blocks) are the code users move away from: not checked, but each must be
// followed by the 0.3 code that replaces it.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { afterAll, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const GUIDE = 'docs/migrating-from-0.2.md'
const dir = join(root, 'test/docs/.snippets-migrating')

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

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

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

it('every 0.3 snippet type-checks with strict and noUncheckedIndexedAccess', () => {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const snippets = blocks().filter((block) => block.info === 'ts')
  expect(snippets.length).toBeGreaterThanOrEqual(7)
  const files = snippets.map((block) => {
    const file = join(dir, `line-${block.line}.ts`)
    // `export {}`: each snippet is a module, so its own declarations may shadow the globals.
    writeFileSync(file, `${block.code}\nexport {}\n`)
    return file
  })
  const program = ts.createProgram([...files, join(root, 'test/docs/snippet-globals.d.ts')], {
    strict: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2023,
    lib: ['lib.es2023.d.ts', 'lib.esnext.disposable.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    typeRoots: [join(root, 'node_modules/@types')],
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    paths: { 'chat-service-sdk': [join(root, 'src/index.ts')] },
  })
  const problems = program
    .getSourceFiles()
    .filter((file) => file.fileName.startsWith(dir))
    .flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)])
    .map((diagnostic) => {
      const file = diagnostic.file as ts.SourceFile
      const { line } = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
      const guideLine = Number(/line-(\d+)/.exec(file.fileName)?.[1]) + line + 1
      return `${GUIDE}:${guideLine}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`
    })
  expect(problems).toEqual([])
}, 60_000)
