// The places outside the tests that list the endpoints are held to the endpoint table
// (src/endpoints.ts): the README's "The operations" shows a call of each, and the consumer fixture
// that says it uses every endpoint (scripts/consumer/fixtures/sample.ts, type-checked and run from
// the packed tarball by the consumer checks) calls each. A row added to the table fails here,
// naming the file, until they do. (The client's methods, the fake's routes and the tests' matrices
// are held to it by the compiler and test/helpers/endpoint-samples.ts.)
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { ENDPOINTS } from '../../src/endpoints.ts'
import { ROOT, section } from './documents.ts'

const names = Object.values(ENDPOINTS).map((endpoint) => endpoint.name)

/** The endpoint names `text` never calls as `.name(`. */
function notCalled(text: string): string[] {
  return names.filter((name) => !text.includes(`.${name}(`))
}

it('README.md, "The operations", shows a call of every endpoint', () => {
  const operations = section('README.md', 'The operations')
  expect(operations, 'README.md has "## The operations"').toBeDefined()
  expect(notCalled(operations ?? '')).toEqual([])
})

it('README.md, "The operations", names every endpoint by its method and path', () => {
  const operations = section('README.md', 'The operations') ?? ''
  const missing = Object.values(ENDPOINTS)
    .map((endpoint) => `${endpoint.method} /rest/v1${endpoint.path.replace(/\{\w+\}/g, ':id')}`)
    .filter((route) => !operations.includes(route))
  expect(missing).toEqual([])
})

it('scripts/consumer/fixtures/sample.ts calls every endpoint', () => {
  expect(notCalled(readFileSync(join(ROOT, 'scripts/consumer/fixtures/sample.ts'), 'utf8'))).toEqual([])
})
