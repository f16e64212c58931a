// The package root is a budget (issue 31): at most 60 names, so that a user can hold it in their
// head. Read from the API report (api/chat-service-sdk.api.md, which CI holds to the build with
// `npm run api:check`): one `export` line per root name. A new export that would pass the budget
// frees a slot first: a part of another type needs no name of its own (`IssueTokenResponse['user']`),
// a constant that is not a knob stays internal, a class users only reach through the client goes
// under the `resources` namespace (src/resources/resources.ts).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { ROOT } from './documents.ts'

const BUDGET = 60

const report = readFileSync(join(ROOT, 'api/chat-service-sdk.api.md'), 'utf8')
// One name may be declared twice (an interface and the namespace of its types: RateLimitStore).
const declared = [...report.matchAll(/^export (?:declare )?(?:abstract )?(?:class|interface|type|const|function|namespace|enum) (\w+)/gm)]
const names = [...new Set(declared.map((match) => match[1] ?? ''))]

it(`the package root exports at most ${BUDGET} names`, () => {
  expect(names.length, names.join(', ')).toBeLessThanOrEqual(BUDGET)
  expect(names.length).toBeGreaterThan(20) // the report was read
})

it('no numeric tunable is a root export (defaults are documented; the options are the knobs)', () => {
  expect(names.filter((name) => /^(DEFAULT|RATE_LIMIT_STORE|BACKOFF|MIN_RETRY|MAX_RETRY|MAX_SCANS)/.test(name))).toEqual([])
})
