// The built package's classes have the names of src/ (scripts/class-names.ts): what `util.inspect`,
// `constructor.name` and stack traces show users, by `import` and by `require` of the installed
// tarball; and the renaming itself, on code shaped as esbuild writes it.
import { describe, expect, it } from 'vitest'
import { keepClassNames } from '../../scripts/class-names.ts'
import { run, useConsumer } from './helpers.ts'

/** Prints the names of the classes a user meets before any call, and of a page's class. */
const PROBE = `
const client = new sdk.ChatServiceClient({ baseUrl: 'http://127.0.0.1:9', keyId: 'key_names', keySecret: 'secret_names' })
const { inspect } = require('node:util')
console.log(JSON.stringify([
  client.constructor.name,
  client.withOptions({ maxRetries: 1 }).constructor.name,
  ...['agents', 'auth', 'conversations', 'customerUsers'].map((name) => client[name].constructor.name),
  client.conversations.messages.constructor.name,
  client.customerUsers.withMetadata(require('zod').object({})).constructor.name,
  inspect(client.agents).split(' ')[0],
]))
`
const EXPECTED = [
  'ChatServiceClient',
  'ChatServiceClient',
  'Agents',
  'Auth',
  'Conversations',
  'CustomerUsers',
  'ConversationMessages',
  'CustomerUsers',
  'Agents',
]

const consumer = useConsumer()

describe('the built classes keep their names', () => {
  it.each([
    ['require', ['-e', `const sdk = require('chat-service-sdk'); ${PROBE}`]],
    [
      'import',
      [
        '--input-type=module',
        '-e',
        `import * as sdk from 'chat-service-sdk'; import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/'); ${PROBE}`,
      ],
    ],
  ])('by %s: the client, its resources and a derived client', async (_loader, args) => {
    const ran = await run(process.execPath, args, consumer.dir)
    expect(ran.status, ran.stderr).toBe(0)
    expect(JSON.parse(ran.stdout)).toEqual(EXPECTED)
  })
})

describe('keepClassNames', () => {
  it('names a self-naming class as its variable, and its references in the body', () => {
    const code = [
      'var Agents = class _Agents {',
      '  static {',
      '    createAgents = (pipeline) => new _Agents(pipeline);',
      '  }',
      '  other() { return this._Agents ?? __Agents ?? _Agents2 }',
      '};',
    ].join('\n')
    expect(keepClassNames(code)).toBe(
      [
        'var Agents = class Agents {',
        '  static {',
        '    createAgents = (pipeline) => new Agents(pipeline);',
        '  }',
        '  other() { return this._Agents ?? __Agents ?? _Agents2 }',
        '};',
      ].join('\n'),
    )
  })

  it('leaves a class whose inner name is bound elsewhere too, and code with none', () => {
    const shared = 'var Page = class _Page {\n  m() { return new _Page() }\n};\nfunction f() { let _Page = 1; return _Page }'
    expect(keepClassNames(shared)).toBe(shared)
    const plain = 'var Page = class {\n};\nvar Other = class _Page {};'
    expect(keepClassNames(plain)).toBe(plain)
  })
})
