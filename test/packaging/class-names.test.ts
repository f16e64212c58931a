// The built package's classes have the names of src/ (scripts/class-names.ts): what `util.inspect`,
// `constructor.name` and stack traces show users, by `import` and by `require` of the installed
// tarball; and the renaming itself, on code shaped as esbuild writes it.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
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

describe('the installed package', () => {
  it('has no class named `_X` in any of its JavaScript files (pages and promises included)', () => {
    const files = readdirSync(join(consumer.pkg, 'dist'), { recursive: true, encoding: 'utf8' }).filter((file) => /\.c?js$/.test(file))
    expect(files.length).toBeGreaterThan(4)
    const left = files.flatMap((file) =>
      [...readFileSync(join(consumer.pkg, 'dist', file), 'utf8').matchAll(/= class (_\w+)/g)].map((m) => `${file}: ${m[1]}`),
    )
    expect(left).toEqual([])
  })
})

describe('keepClassNames', () => {
  it('names a self-naming class as its variable, and its references in its body only', () => {
    const code = [
      'var Agents = class _Agents {',
      '  static {',
      '    createAgents = (pipeline) => new _Agents(pipeline);',
      '  }',
      '  other() { return this._Agents ?? __Agents ?? _Agents2 }',
      '};',
      // Another module's parameter that esbuild happened to name `_Agents`, outside the class.
      'function describe2(_Agents) { return `${_Agents}: ${Agents.name}` }',
    ].join('\n')
    expect(keepClassNames(code)).toBe(
      [
        'var Agents = class Agents {',
        '  static {',
        '    createAgents = (pipeline) => new Agents(pipeline);',
        '  }',
        '  other() { return this._Agents ?? __Agents ?? _Agents2 }',
        '};',
        'function describe2(_Agents) { return `${_Agents}: ${Agents.name}` }',
      ].join('\n'),
    )
  })

  it('an indented one (in a CommonJS bundle, a module made on first use): its body ends at its own indent', () => {
    const code =
      '  init = () => {\n    Meter = class _Meter {\n      static N = 1;\n      m() { return _Meter.N }\n    };\n    other = _Meter;\n  };'
    expect(keepClassNames(code)).toBe(
      '  init = () => {\n    Meter = class Meter {\n      static N = 1;\n      m() { return Meter.N }\n    };\n    other = _Meter;\n  };',
    )
  })

  it('leaves code without a self-naming class as it is', () => {
    const plain = 'var Page = class {\n  m() { return 1 }\n};\nfunction f(_Page) { return _Page }'
    expect(keepClassNames(plain)).toBe(plain)
  })

  it('fails the build, naming the class, where it cannot be sure', () => {
    expect(() => keepClassNames('var Agents = class _Agents2 {\n  m() { return new _Agents2() }\n};')).toThrow(
      'class-names: cannot name _Agents2 back to Agents: esbuild named it _Agents2, not _Agents',
    )
    expect(() => keepClassNames('var Agents = class _Agents {\n  m() { return new _Agents() }')).toThrow('no `};` ends its body')
  })
})
