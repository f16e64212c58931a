// README.md is the npm package's page, and the guides under docs/ ship in the package beside it
// (`files` in package.json): users read them on npmjs.com, in their editor and in
// node_modules/chat-service-sdk, so they may speak only of what the package contains. A link or a
// path they name that exists in this repository must be a file the package ships (what `npm pack`
// lists), and they name no npm script of the repository, because an npm user has neither the file
// nor the script. The one exception is README's section "Working on this repository", which says
// outright that it is about a clone. Repository material goes in DEVELOPERS.md.
//
// Every guide is shipped, linked from the README and listed in TypeDoc's projectDocuments (so the
// API docs link it too), and every relative link of these documents reaches a file and a heading
// that exist: a section moved from one document to another leaves no dead link behind.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { expect, it } from 'vitest'
import { anchors, documents, guides, read, ROOT as root } from './documents.ts'

const REPOSITORY_SECTION = '## Working on this repository'

/** A document split into what speaks to npm users and README's repository section. */
function split(document: string): { forUsers: string; repository: string } {
  const text = read(document)
  const start = text.indexOf(`\n${REPOSITORY_SECTION}\n`)
  if (document !== 'README.md' || start < 0) return { forUsers: text, repository: '' }
  const next = text.indexOf('\n## ', start + 1)
  const end = next < 0 ? text.length : next
  return { forUsers: text.slice(0, start) + text.slice(end), repository: text.slice(start, end) }
}

/** The paths `npm pack` puts in the tarball (the build's own files are left out: dist/ need not exist here). */
function shippedFiles(): string[] {
  const json = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  const [pack] = JSON.parse(json) as [{ files: { path: string }[] }]
  return pack.files.map((file) => file.path)
}
const shipped = shippedFiles()

/** Relative link targets of a markdown text (`[a](docs/x.md#y)`), outside code blocks. */
function linksIn(markdown: string): { path: string; anchor: string }[] {
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, '')
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target)) // https:, mailto:
    .map((target) => {
      const [path = '', anchor = ''] = target.split('#')
      return { path, anchor }
    })
}

/** Link targets and path-like words (`a/b`, `dir/`, `NAME.md`) of a markdown text, as paths from the root. */
function pathsIn(document: string, markdown: string): string[] {
  const found = new Set<string>()
  for (const { path } of linksIn(markdown)) if (path !== '') found.add(normalize(join(dirname(document), path)))
  const words = /[\w.-]*(?:\/[\w.-]+)+\/?|[\w.-]+\/(?![\w.-])|[\w.-]+\.(?:md|ts|js|mjs|cjs|json|sh|ya?ml)\b/g
  for (const match of markdown.matchAll(words)) {
    const word = match[0].replace(/^\.?\//, '')
    // A path in prose may be meant from the root (`docs/paging.md`) or from the document (`paging.md`).
    found.add(word)
    found.add(normalize(join(dirname(document), word)))
  }
  return [...found].filter((path) => path !== '' && path !== '.')
}

const isShipped = (path: string): boolean => {
  const bare = path.replace(/\/$/, '')
  return shipped.some((file) => file === bare || file.startsWith(`${bare}/`))
}

it.each(documents())(
  '%s names no file of the repository that the package does not ship (README: outside "Working on this repository")',
  (document) => {
    const repositoryOnly = pathsIn(document, split(document).forUsers).filter((path) => existsSync(join(root, path)) && !isShipped(path))
    expect(repositoryOnly, 'move repository material to DEVELOPERS.md').toEqual([])
  },
)

it.each(documents())('%s runs no npm script of the repository (README: outside "Working on this repository")', (document) => {
  expect(split(document).forUsers.match(/\bnpm (?:start|test|run(?:-script)?)\b[^\n]*/g) ?? []).toEqual([])
})

it.each(documents())('every relative link of %s reaches a shipped file and, with #, one of its headings', (document) => {
  const dead = linksIn(split(document).forUsers).flatMap(({ path, anchor }) => {
    const target = path === '' ? document : normalize(join(dirname(document), path))
    if (!existsSync(join(root, target)) || !isShipped(target)) return [`${path}: no such shipped file (${target})`]
    if (anchor !== '' && target.endsWith('.md') && !anchors(target).has(anchor)) return [`${path}#${anchor}: no such heading in ${target}`]
    return []
  })
  expect(dead).toEqual([])
})

it('ships every guide, links it from the README, and lists it in the API docs (typedoc.json projectDocuments)', () => {
  expect(guides().length).toBeGreaterThan(5)
  const readme = read('README.md')
  const typedoc = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')) as { projectDocuments?: string[]; out?: string }
  for (const guide of guides()) {
    expect(shipped, guide).toContain(guide)
    expect(readme, `README.md links ${guide}`).toContain(`](${guide})`)
    expect(typedoc.projectDocuments, `typedoc.json lists ${guide}`).toContain(guide)
  }
  // TypeDoc's output is not shipped, and not mistaken for a guide.
  expect(typedoc.out).toBeDefined()
  expect(isShipped(relative(root, join(root, typedoc.out ?? '')))).toBe(false)
})

it('keeps the repository section: two set-up commands, one of them the test command CI runs', () => {
  const { repository } = split('README.md')
  expect(repository).toContain('```sh\nnpm install && npm start')
  expect(repository).toMatch(/\nnpm test\b/)
  const ci = readFileSync(join(root, '.ci/run'), 'utf8')
  expect(ci).toMatch(/step "tests" npm test\b/)
})
