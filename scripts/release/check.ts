// `npm run release:check`: the release gate (DEVELOPERS.md, "Releases"). Run after `npm run build`.
//
//   node scripts/release/check.ts [--root DIR] [--package DIR] [--no-pack] [--no-fixtures] [--no-publish-dry-run]
//
// 1. The API: today's reports (api/*.api.md) against the newest release's (api/releases/<v>/),
//    each change classified breaking, additive or deprecated (scripts/release/api-report.ts).
// 2. The last release's consumer fixtures (api/releases/<v>/consumer-fixtures/*.ts) compiled
//    against today's types, from the packed tarball (scripts/release/fixtures.ts): an error is a
//    break of that release's users' code.
// 3. The CHANGELOG's sections above `## [<v>]` (Unreleased, and the new version's while releasing)
//    must say what 1 and 2 found: a breaking change a "Breaking" entry naming it (`Name` or
//    `Name.member` in backticks), an addition an entry under "### Added", a new deprecation an
//    entry under "### Deprecated" naming it.
// 4. The version: the change (API, fixtures, and the entries themselves: a "Breaking" entry about
//    behaviour counts) sets the least next version: for 0.x, breaking needs the next minor
//    (0.3.0 → 0.4.0), anything else the next patch; from 1.0, major, minor, patch. While
//    package.json still says <v> (between releases) the gate passes and prints what the next
//    version must be; once package.json is bumped, it must be at least that, the CHANGELOG must
//    have its dated `## [x.y.z] - YYYY-MM-DD` section, and src/version.ts must agree.
//    README.md and docs/*.md may pin only a released version (`chat-service-sdk@X.Y.Z`).
// 5. The package (scripts/release/pack.ts): `npm pack` twice gives the same bytes, the file list is
//    package-files.txt's, no built file carries package.json's development parts, and `npm publish
//    --dry-run` would upload the same tarball.
// Every problem is printed with what to do; the last line is `release:check: ok` or
// `release:check: N problems`, and the exit status 1 on any problem.
//
// --root: the repository to check (default: this one; the tests check temporary copies).
// --package: compile the fixtures against this unpacked package (package.json + dist/) instead of
// a packed tarball (package.json `types` may point into src/: the tests skip a build that way).
// --no-pack: skip 5 (the fixtures then need --package). --no-fixtures: skip 2.
// --no-publish-dry-run: skip `npm publish --dry-run` (it asks the registry who you are).
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { releaseGate } from './gate.ts'

const { values: flags } = parseArgs({
  options: {
    root: { type: 'string' },
    package: { type: 'string' },
    pack: { type: 'boolean', default: true },
    fixtures: { type: 'boolean', default: true },
    'publish-dry-run': { type: 'boolean', default: true },
  },
  allowNegative: true,
})
const problems = releaseGate({
  root: resolve(flags.root ?? fileURLToPath(new URL('../..', import.meta.url))),
  package: flags.package === undefined ? undefined : resolve(flags.package),
  pack: flags.pack,
  fixtures: flags.fixtures,
  publishDryRun: flags['publish-dry-run'],
})
process.exitCode = problems.length === 0 ? 0 : 1
