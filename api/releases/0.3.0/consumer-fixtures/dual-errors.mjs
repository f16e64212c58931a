// Consumer check "esm-cjs-errors" (scripts/consumer/run.sh): an app that both `import`s and
// `require`s chat-service-sdk loads two copies (dist/index.js and dist/index.cjs), each with its
// own classes. `instanceof` must still work across them for every error class (issue 11): an error
// thrown by one copy is an instance of the same class, and of its ancestors, from the other copy,
// and of no other class. Runs in a fresh `type: module` project with only the tarball installed.
import { strict as assert } from 'node:assert'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const esm = await import('chat-service-sdk')
const cjs = require('chat-service-sdk')
const { createFakeChatService, generateDataset } = await import('chat-service-sdk/testing')

// Two copies, or the check proves nothing.
assert.match(import.meta.resolve('chat-service-sdk'), /\/dist\/index\.js$/)
assert.match(require.resolve('chat-service-sdk'), /\/dist\/index\.cjs$/)
assert.notEqual(esm.ChatServiceError, cjs.ChatServiceError, 'the ESM and CommonJS builds share their classes: not two copies')

// Every exported error class, found by what it is (so a new one is covered), and at least API.md's.
const errorClassNames = (sdk) =>
  Object.keys(sdk)
    .filter((name) => typeof sdk[name] === 'function' && sdk[name].prototype instanceof Error)
    .sort()
const names = errorClassNames(esm)
assert.deepEqual(errorClassNames(cjs), names, 'the two builds export different error classes')
const API_MD = [
  'ChatServiceError',
  'APIError',
  'BadRequestError',
  'AuthenticationError',
  'PermissionDeniedError',
  'NotFoundError',
  'ConflictError',
  'UnprocessableEntityError',
  'RateLimitError',
  'InternalServerError',
  'APIConnectionError',
  'APITimeoutError',
  'APIUserAbortError',
  'RequestValidationError',
  'ResponseValidationError',
]
for (const name of API_MD) assert.ok(names.includes(name), `${name} (API.md) is not exported`)

/** An instance of `sdk[name]`, built with its public constructor (arguments chosen by its base class). */
function make(sdk, name) {
  const ErrorClass = sdk[name]
  const response = { status: 404, headers: {}, body: { error: 'not found' }, method: 'GET', path: '/rest/v1/agents' }
  const is = (base) => ErrorClass === sdk[base] || ErrorClass.prototype instanceof sdk[base]
  if (is('APIError')) return new ErrorClass(response)
  if (is('ResponseValidationError')) return new ErrorClass({ ...response, status: 200, issues: [] })
  if (is('RequestValidationError')) return new ErrorClass('agents.list', [])
  if (is('APIConnectionError')) return new ErrorClass({ method: 'GET', path: '/rest/v1/agents' })
  return new ErrorClass('message')
}

// The full matrix: an error of class A from one copy is `instanceof` class B of the other copy
// exactly when it is `instanceof` B of its own copy (B is A or an ancestor of A).
let checked = 0
for (const [from, to, label] of [
  [cjs, esm, 'CommonJS error vs ESM class'],
  [esm, cjs, 'ESM error vs CommonJS class'],
]) {
  for (const a of names) {
    const error = make(from, a)
    assert.ok(error instanceof from[a], `${a} is not an instance of its own class`)
    assert.ok(error instanceof Error)
    for (const b of names) {
      const expected = error instanceof from[b]
      assert.equal(error instanceof to[b], expected, `${label}: ${a} instanceof ${b} should be ${expected}`)
      checked++
    }
  }
}

// The cases users write, spelled out.
const fromCjs = new cjs.NotFoundError({ status: 404, headers: {}, body: undefined, method: 'PUT', path: '/rest/v1/customer-users/x' })
const fromEsm = new esm.NotFoundError({ status: 404, headers: {}, body: undefined, method: 'PUT', path: '/rest/v1/customer-users/x' })
assert.ok(fromCjs instanceof esm.NotFoundError && fromEsm instanceof cjs.NotFoundError)
assert.ok(fromCjs instanceof esm.APIError && fromCjs instanceof esm.ChatServiceError)
assert.ok(fromEsm instanceof cjs.APIError && fromEsm instanceof cjs.ChatServiceError)
assert.ok(!(fromCjs instanceof esm.RateLimitError) && !(fromEsm instanceof cjs.RateLimitError))
assert.ok(!(new cjs.APIError({ status: 418, headers: {}, body: undefined, method: 'GET', path: '/' }) instanceof esm.NotFoundError))
assert.ok(!(new Error('plain') instanceof esm.ChatServiceError) && !({ name: 'NotFoundError' } instanceof cjs.NotFoundError))

// And errors as the SDK throws them: a 404 from each copy's client, caught against the other's classes.
const seed = generateDataset({ seed: 3, agents: 1, customerUsers: 1, conversations: 1, messages: 1 })
const key = seed.companies[0].keys[0]
const server = await createFakeChatService({ seed }).listen()
try {
  for (const [thrower, catcher, label] of [
    [cjs, esm, 'thrown by the CommonJS client'],
    [esm, cjs, 'thrown by the ESM client'],
  ]) {
    const client = new thrower.ChatServiceClient({ baseUrl: server.url, keyId: key.keyId, keySecret: key.keySecret, logLevel: 'off' })
    const error = await client.customerUsers.update('cu_missing', { name: 'x' }).then(
      () => assert.fail('expected a 404'),
      (e) => e,
    )
    await client.close()
    assert.ok(error instanceof catcher.NotFoundError, `${label}: not instanceof the other copy's NotFoundError`)
    assert.ok(error instanceof catcher.APIError && error instanceof catcher.ChatServiceError, `${label}: ancestors`)
    assert.ok(!(error instanceof catcher.RateLimitError) && !(error instanceof catcher.APIConnectionError), `${label}: unrelated class`)
  }
} finally {
  await server.close()
}

console.log(`esm-cjs-errors: ${names.length} error classes, ${checked} cross-copy instanceof checks, thrown errors from both copies: ok`)
