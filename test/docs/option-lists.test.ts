// Every list of options users read is the option table's (src/internal/option-table.ts): the
// README's per-call options and its "Other options", docs/configuration.md's "Every option" table
// (names, where each may be given, defaults), and the TSDoc of every method's `options`. A new
// option, or one whose scope changes, fails here until the docs say so; hand-written lists had
// drifted before (they missed totalTimeout and rateLimitPause).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { keysIn, OPTIONS, type Scope } from '../../src/internal/option-table.ts'
import { read, ROOT, section } from './documents.ts'

/** The backticked names of a text, in order. */
const names = (text: string): string[] => [...text.matchAll(/`(\w+)`/g)].map((match) => match[1] ?? '')
const sorted = (list: readonly string[]): string[] => [...list].sort()

/** How docs/configuration.md's "where" column says each scope. */
const WHERE: Record<Scope, string> = {
  call: 'client, withOptions, call',
  withOptions: 'client, withOptions',
  client: 'client',
  callOnly: 'call',
  list: 'list call',
}

describe('README.md', () => {
  it('lists every per-call option, and what list methods add', () => {
    const sentence =
      /Every method takes a last, optional argument of per-call options:\s*`\{([^}]*)\}`\s*\(list\s+methods\s+also\s+take\s+([^)]*)\)/.exec(
        read('README.md'),
      )
    expect(sentence, 'README.md says which options every method takes').not.toBeNull()
    const perCall = (sentence?.[1] ?? '').split(',').map((name) => name.trim())
    expect(sorted(perCall)).toEqual(sorted(keysIn('call', 'callOnly')))
    expect(sorted(names(sentence?.[2] ?? ''))).toEqual(sorted(keysIn('list')))
  })

  it('"Configuration" names every option of new ChatServiceClient, in its environment table or "Other options"', () => {
    const configuration = section('README.md', 'Configuration') ?? ''
    const environment = [...configuration.matchAll(/^\| `(\w+)` \|/gm)].map((match) => match[1] ?? '')
    const other = names(/Other options:([\s\S]*?):/.exec(configuration)?.[1] ?? '')
    expect(sorted([...environment, ...other])).toEqual(sorted(keysIn('client', 'withOptions', 'call')))
  })
})

describe('docs/configuration.md, "Every option"', () => {
  const table = [...(section('docs/configuration.md', 'Every option') ?? '').matchAll(/^\| `(\w+)` \| ([^|]+) \| ([^|]+) \|/gm)].map(
    (match) => ({
      name: match[1] ?? '',
      where: (match[2] ?? '').trim(),
      fallback: (match[3] ?? '').trim(),
    }),
  )

  it('has a row for every option, in the table order of the source', () => {
    expect(table.map((row) => row.name)).toEqual(Object.keys(OPTIONS))
  })

  it.each(Object.entries(OPTIONS))('%s: where it may be given, and its default', (name, option) => {
    const row = table.find((candidate) => candidate.name === name)
    expect(row?.where).toBe(WHERE[option.scope])
    const fallback: unknown = option.default
    if (typeof fallback === 'number') expect(row?.fallback).toContain(fallback.toLocaleString('en-US'))
    else if (typeof fallback === 'string') expect(row?.fallback).toContain(`'${fallback}'`)
    else if (typeof fallback === 'boolean') expect(row?.fallback).toBe(`\`${String(fallback)}\``)
    else if (fallback === undefined) expect(row?.fallback).toMatch(/^none|^`CHAT_SERVICE_/)
    else if (fallback === console) expect(row?.fallback).toBe('`console`')
    else expect(row?.fallback).toBe('none') // headers: {}
  })
})

describe('TSDoc of the methods', () => {
  const sources = ['src/resources', 'src/pagination'].flatMap((dir) =>
    readdirSync(join(ROOT, dir))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => `${dir}/${file}`),
  )
  it.each(sources)('%s: an `@param options` that names call options names them all, or links the interface instead', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8')
    const callOptions = keysIn('call', 'callOnly') as string[]
    for (const [block] of text.matchAll(/@param options - [\s\S]*?(?=\n\s*\*\s*@|\n\s*\*\/)/g)) {
      const named = names(block).filter((name) => callOptions.includes(name))
      if (named.length > 0) expect(sorted(named), `${file}: ${block}`).toEqual(expect.arrayContaining(sorted(callOptions)))
    }
  })
})
