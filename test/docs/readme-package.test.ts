// README.md is the npm package's page: it may speak only of what the package contains. A link or
// a path it names that exists in this repository must be a file the package ships (what
// `npm pack` lists), and it names no npm script of the repository, because an npm user has neither
// the file nor the script. The one exception is the section "Working on this repository", which
// says outright that it is about a clone. Repository material goes in DEVELOPERS.md.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const REPOSITORY_SECTION = '## Working on this repository'

/** README.md split into what speaks to npm users and the repository section. */
function readme(): { forUsers: string; repository: string } {
  const text = readFileSync(join(root, 'README.md'), 'utf8')
  const start = text.indexOf(`\n${REPOSITORY_SECTION}\n`)
  if (start < 0) return { forUsers: text, repository: '' }
  const next = text.indexOf('\n## ', start + 1)
  const end = next < 0 ? text.length : next
  return { forUsers: text.slice(0, start) + text.slice(end), repository: text.slice(start, end) }
}

/** The paths `npm pack` puts in the tarball (the build's own files are left out: dist/ need not exist here). */
function shippedFiles(): string[] {
  const json = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  const [pack] = JSON.parse(json) as [{ files: { path: string }[] }]
  return pack.files.map((file) => file.path)
}

/** Link targets and path-like words (`a/b`, `dir/`, `NAME.md`) of a markdown text, without anchors. */
function pathsIn(markdown: string): string[] {
  const found = new Set<string>()
  for (const match of markdown.matchAll(/\]\(([^)\s]+)\)/g)) found.add(match[1] ?? '')
  const words = /[\w.-]*(?:\/[\w.-]+)+\/?|[\w.-]+\/(?![\w.-])|[\w.-]+\.(?:md|ts|js|mjs|cjs|json|sh|ya?ml)\b/g
  for (const match of markdown.matchAll(words)) found.add(match[0])
  return [...found]
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target)) // https:, mailto:
    .map((target) => target.split('#')[0]?.replace(/^\.?\//, '') ?? '')
    .filter((path) => path !== '')
}

it('names no file of the repository that the package does not ship, outside "Working on this repository"', () => {
  const shipped = shippedFiles()
  const isShipped = (path: string): boolean => {
    const bare = path.replace(/\/$/, '')
    return shipped.some((file) => file === bare || file.startsWith(`${bare}/`))
  }
  const { forUsers } = readme()
  const repositoryOnly = pathsIn(forUsers).filter((path) => existsSync(join(root, path)) && !isShipped(path))
  expect(repositoryOnly, 'move repository material to DEVELOPERS.md').toEqual([])
})

it('runs no npm script of the repository outside "Working on this repository"', () => {
  const { forUsers } = readme()
  expect(forUsers.match(/\bnpm (?:start|test|run(?:-script)?)\b[^\n]*/g) ?? []).toEqual([])
})

it('keeps the repository section: two set-up commands, one of them the test command CI runs', () => {
  const { repository } = readme()
  expect(repository).toContain('```sh\nnpm install && npm start')
  expect(repository).toMatch(/\nnpm test\b/)
  const ci = readFileSync(join(root, '.ci/run'), 'utf8')
  expect(ci).toMatch(/step "tests" npm test\b/)
})
