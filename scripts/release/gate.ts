// The release gate's checks, as a function (check.ts is its command line, `npm run release:check`;
// what it checks and why: check.ts's header and DEVELOPERS.md, "Releases").
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compareReports, parseReport, type ApiChange } from './api-report.ts'
import { names, parseChangelog, type Entry } from './changelog.ts'
import { compileFixtures, type FixtureCompile } from './fixtures.ts'
import { checkPack } from './pack.ts'

/** What to check, and where (check.ts's flags). */
export interface GateOptions {
  /** The repository to check. */
  readonly root: string
  /** An unpacked package to compile the fixtures against, instead of the packed tarball. */
  readonly package?: string | undefined
  readonly pack: boolean
  readonly fixtures: boolean
  readonly publishDryRun: boolean
  /** Where each line goes (default: stdout). */
  readonly print?: ((line: string) => void) | undefined
}

/** This repository (its node_modules give the fixtures' other packages). */
const here = fileURLToPath(new URL('../..', import.meta.url))

/**
 * Fixtures that are completeness checks, not users' code: optional-undefined.ts lists every
 * optional member of every input (a mapped type requires each key), so it fails by design as soon
 * as an option is added; today's copy runs in the consumer checks. Left out of the old release's
 * compile.
 */
const EXHAUSTIVE_FIXTURES: readonly string[] = ['optional-undefined.ts']

type Level = 'none' | 'patch' | 'additive' | 'breaking'
const RANK: Record<Level, number> = { none: 0, patch: 1, additive: 2, breaking: 3 }
const higher = (a: Level, b: Level): Level => (RANK[a] >= RANK[b] ? a : b)

interface Version {
  readonly major: number
  readonly minor: number
  readonly patch: number
}
function parseVersion(text: string): Version | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(text)
  return match === null ? undefined : { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) }
}
const show = (v: Version): string => `${v.major}.${v.minor}.${v.patch}`
const compare = (a: Version, b: Version): number => a.major - b.major || a.minor - b.minor || a.patch - b.patch
/** The least version after `last` that a change of `level` needs (semver; 0.x: breaking takes the minor). */
function required(last: Version, level: Level): Version | undefined {
  if (level === 'none') return undefined
  if (last.major === 0) return level === 'breaking' ? { major: 0, minor: last.minor + 1, patch: 0 } : { ...last, patch: last.patch + 1 }
  if (level === 'breaking') return { major: last.major + 1, minor: 0, patch: 0 }
  if (level === 'additive') return { major: last.major, minor: last.minor + 1, patch: 0 }
  return { ...last, patch: last.patch + 1 }
}

/** Runs the gate; returns the problems found (each also printed), none when all is well. */
export function releaseGate(options: GateOptions): string[] {
  const root = resolve(options.root)
  const print =
    options.print ??
    ((line: string): void => {
      console.log(line)
    })
  const flags = { package: options.package, pack: options.pack, fixtures: options.fixtures, 'publish-dry-run': options.publishDryRun }
  const problems: string[] = []
  const say = (line: string): void => {
    print(`release:check: ${line}`)
  }
  const problem = (line: string): void => {
    problems.push(line)
    print(`release:check: PROBLEM: ${line}`)
  }

  // --- the last release ------------------------------------------------------------------------
  const releasesDir = join(root, 'api/releases')
  const releases = readdirSync(releasesDir)
    .map((name) => ({ name, version: parseVersion(name) }))
    .filter((release): release is { name: string; version: Version } => release.version !== undefined)
    .sort((a, b) => compare(a.version, b.version))
  const last = releases.at(-1)
  if (last === undefined) {
    problem(`no release in ${releasesDir} to compare with`)
    return problems
  }
  const lastDir = join(releasesDir, last.name)
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
  const current = parseVersion(pkg.version)
  say(`last release ${last.name} (api/releases/${last.name}/); package.json says ${pkg.version}`)

  // --- 1. the API reports ----------------------------------------------------------------------
  const changes: ApiChange[] = []
  const reportNames = new Set([...readdirSync(lastDir), ...readdirSync(join(root, 'api'))].filter((name) => name.endsWith('.api.md')))
  for (const name of [...reportNames].sort()) {
    // chat-service-sdk-testing-msw.api.md is the entry point chat-service-sdk/testing/msw.
    const base = name.replace(/\.api\.md$/, '')
    const entry = base.startsWith('chat-service-sdk-')
      ? `chat-service-sdk/${base.slice('chat-service-sdk-'.length).replace(/-/g, '/')}`
      : base
    const before = join(lastDir, name)
    const after = join(root, 'api', name)
    if (!existsSync(after)) {
      changes.push({ kind: 'breaking', entry, key: entry, what: 'entry point removed' })
      continue
    }
    if (!existsSync(before)) {
      changes.push({ kind: 'additive', entry, key: entry, what: 'entry point added' })
      continue
    }
    changes.push(...compareReports(parseReport(readFileSync(before, 'utf8')), parseReport(readFileSync(after, 'utf8')), entry))
  }
  // The CHANGELOG's entries since the last release (checked against all this in 3).
  const sections = parseChangelog(readFileSync(join(root, 'CHANGELOG.md'), 'utf8'))
  const lastIndex = sections.findIndex((section) => section.title === last.name)
  if (lastIndex < 0) problem(`CHANGELOG.md has no "## [${last.name}]" section for the last release`)
  const pending = sections.slice(0, Math.max(lastIndex, 0))
  const entries: Entry[] = pending.flatMap((section) => section.entries)
  const breakingEntries = entries.filter((entry) => entry.breaking)
  const named = breakingEntries.flatMap((entry) => entry.names)
  // A required member added to an interface breaks objects users write of it; of an interface users
  // only receive (the SDK makes its objects: FakeChatService, a page) it is an addition. The report
  // cannot tell which: an entry under "### Added" naming the member itself (`Name.member`) says so.
  // Likewise a changed declaration whose change is compatible (an input widened: `boolean` to
  // `boolean | 'gzip'`): an entry under "### Added" or "### Changed", not "Breaking", naming the
  // item itself says so.
  const namedAdded = new Set(entries.filter((entry) => entry.heading === 'Added').flatMap((entry) => entry.names))
  const namedCompatible = new Set(
    entries
      .filter((entry) => (entry.heading === 'Added' || entry.heading === 'Changed') && !entry.breaking)
      .flatMap((entry) => entry.names),
  )
  for (const [i, change] of changes.entries()) {
    if (change.what === 'added as a required member' && namedAdded.has(change.key)) {
      changes[i] = { ...change, kind: 'additive', what: 'added as a required member; an "Added" entry says users only receive it' }
    } else if (change.what === 'changed' && namedCompatible.has(change.key) && !names(change.key, named)) {
      changes[i] = { ...change, kind: 'additive', what: 'changed; an entry that is not "Breaking" names it: compatible' }
    }
  }
  let apiLevel: Level = 'none'
  for (const change of changes) apiLevel = higher(apiLevel, change.kind === 'breaking' ? 'breaking' : 'additive')
  say(`API since ${last.name}: ${apiLevel === 'none' ? 'no change' : apiLevel} (${changes.length} changes)`)
  for (const change of changes) say(`  ${change.kind.padEnd(10)} ${change.entry}: ${change.key} (${change.what})`)

  // --- the package: packed, or given --------------------------------------------------------------
  const work = mkdtempSync(join(tmpdir(), 'chat-service-sdk-release-'))
  try {
    let packageDir = flags.package === undefined ? undefined : resolve(flags.package)
    if (flags.pack) {
      if (!existsSync(join(root, 'dist/index.js'))) {
        problem('dist/ is missing: run `npm run build` first')
      } else {
        const packed = checkPack(root, work, { publishDryRun: flags['publish-dry-run'] })
        for (const line of packed.problems) problem(line)
        say(
          `package: ${packed.files.length} files, ${(packed.unpackedSize / 1e6).toFixed(2)} MB unpacked; npm pack twice: ${packed.problems.some((p) => p.includes('reproducible')) ? 'DIFFERENT' : 'the same bytes'}`,
        )
        if (packageDir === undefined) {
          packageDir = join(work, 'package')
          mkdirSync(packageDir)
          execFileSync('tar', ['-xzf', packed.tarball, '-C', packageDir, '--strip-components=1'])
        }
      }
    }

    // --- 2. the last release's fixtures against today's types ------------------------------------
    let fixtures: FixtureCompile | undefined
    const fixturesDir = join(lastDir, 'consumer-fixtures')
    if (!flags.fixtures) {
      say('the fixtures are not compiled (--no-fixtures)')
    } else if (packageDir === undefined) {
      problem('no package to compile the fixtures against (give --package DIR with --no-pack)')
    } else if (!existsSync(fixturesDir)) {
      problem(`api/releases/${last.name}/consumer-fixtures/ is missing`)
    } else {
      fixtures = compileFixtures(fixturesDir, packageDir, join(here, 'node_modules'), EXHAUSTIVE_FIXTURES)
      say(`${last.name}'s consumer fixtures (${fixtures.files.join(', ')}) against today's types: ${fixtures.errors.length} errors`)
      for (const error of fixtures.errors)
        say(`  ${error.where}: TS${error.code}: ${error.message.split('\n')[0]} (involves ${error.names.join(', ') || 'no API name'})`)
      for (const relaxed of fixtures.relaxed)
        say(`  now accepted (not a break): ${relaxed.where}: a misuse ${last.name} refused compiles (TS2578)`)
    }

    // --- 3. the CHANGELOG --------------------------------------------------------------------------
    say(
      `CHANGELOG above [${last.name}]: ${pending.map((section) => `[${section.title}]`).join(', ') || 'nothing'}: ` +
        `${entries.length} entries, ${breakingEntries.length} Breaking${named.length > 0 ? ` (naming ${named.join(', ')})` : ''}`,
    )
    const where = pending[0] === undefined ? 'under "## [Unreleased]"' : `under "## [${pending[0].title}]"`
    for (const change of changes.filter((c) => c.kind === 'breaking')) {
      if (!names(change.key, named)) {
        problem(
          `${change.entry}: ${change.key} is ${change.what}, a breaking change that no "Breaking" entry names: ${where}, ` +
            `"### Changed", add "- Breaking (\`${change.key}\`): what changed and what users do about it"`,
        )
      }
    }
    for (const error of fixtures?.errors ?? []) {
      if (!error.names.some((name) => names(name, named))) {
        problem(
          `${last.name}'s fixture ${error.where} no longer compiles (TS${error.code}: ${error.message.split('\n')[0]}): a break of ` +
            `${last.name} users' code that no "Breaking" entry names; it involves ${error.names.join(', ') || 'no API name'}`,
        )
      }
    }
    const additions = changes.filter((c) => c.kind === 'additive')
    if (additions.length > 0 && !entries.some((entry) => entry.heading === 'Added')) {
      problem(`the API gained ${additions.map((c) => c.key).join(', ')}, and no entry ${where} is under "### Added"`)
    }
    for (const change of changes.filter((c) => c.kind === 'deprecated')) {
      if (!entries.some((entry) => entry.heading === 'Deprecated' && names(change.key, entry.names))) {
        problem(`${change.entry}: ${change.key} is newly @deprecated, and no entry under "### Deprecated" names it (\`${change.key}\`)`)
      }
    }

    // Docs that pin a version (the README's Kubernetes recipe installs chat-service-sdk@X.Y.Z) must
    // pin a released one: 0.3's README named 0.3.0 while package.json still said 0.2.0.
    const docs = [
      'README.md',
      ...(existsSync(join(root, 'docs'))
        ? readdirSync(join(root, 'docs'))
            .filter((name) => name.endsWith('.md'))
            .map((name) => `docs/${name}`)
        : []),
    ]
    const released = new Set(releases.map((release) => release.name))
    for (const doc of docs) {
      const path = join(root, doc)
      if (!existsSync(path)) continue
      for (const match of readFileSync(path, 'utf8').matchAll(/chat-service-sdk@(\d+\.\d+\.\d+)\b/g)) {
        const pinned = match[1] ?? ''
        if (!released.has(pinned))
          problem(`${doc} pins chat-service-sdk@${pinned}, which is not a release (api/releases/ has ${[...released].join(', ')})`)
      }
    }

    // --- 4. the version --------------------------------------------------------------------------
    let level: Level = apiLevel
    if ((fixtures?.errors.length ?? 0) > 0 || breakingEntries.length > 0) level = higher(level, 'breaking')
    if (entries.some((entry) => entry.heading === 'Added' || entry.heading === 'Deprecated')) level = higher(level, 'additive')
    if (entries.length > 0) level = higher(level, 'patch')
    const next = required(last.version, level)
    if (current === undefined) {
      problem(`package.json's version "${pkg.version}" is not x.y.z`)
    } else if (compare(current, last.version) < 0) {
      problem(`package.json says ${pkg.version}, older than the last release ${last.name}`)
    } else if (compare(current, last.version) === 0) {
      for (const section of pending.filter((s) => s.title !== 'Unreleased')) {
        problem(
          `CHANGELOG.md has "## [${section.title}]" (line ${section.line}) while package.json still says ${pkg.version}: bump the version with it`,
        )
      }
      say(
        next === undefined
          ? `nothing to release since ${last.name}`
          : `the change since ${last.name} is ${level}: the next release must be ${show(next)} or later (package.json stays ${pkg.version} until then)`,
      )
    } else {
      if (next !== undefined && compare(current, next) < 0) {
        problem(`package.json says ${pkg.version}, but the change since ${last.name} is ${level}: it needs ${show(next)} or later`)
      }
      const section = pending.find((s) => s.title === pkg.version)
      if (section === undefined) problem(`CHANGELOG.md has no "## [${pkg.version}] - YYYY-MM-DD" section above [${last.name}]`)
      else if (section.date === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(section.date))
        problem(`CHANGELOG.md's "## [${pkg.version}]" (line ${section.line}) has no date (- YYYY-MM-DD)`)
      const versionTs = readFileSync(join(root, 'src/version.ts'), 'utf8')
      if (!versionTs.includes(`VERSION = '${pkg.version}'`)) problem(`src/version.ts's VERSION is not '${pkg.version}' (package.json's)`)
      say(
        `releasing ${pkg.version}: the change since ${last.name} is ${level}${next === undefined ? '' : `, which needs ${show(next)} or later`}`,
      )
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }

  say(problems.length === 0 ? 'ok' : `${problems.length} problem${problems.length === 1 ? '' : 's'}`)
  return problems
}
