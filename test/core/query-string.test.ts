/**
 * The query string of a request (src/internal/url.ts `queryString`), which skips
 * `encodeURIComponent` for what it would return unchanged (issue 32): pinned to what the plain
 * rule makes of every kind of value, `?` + `key=encodeURIComponent(String(value))` joined with `&`,
 * in the keys' order, undefined values left out. Only `page` and `limit` reach it through the
 * public API today (zod holds them to integers), so the rest is checked here, where a parameter
 * added later would meet it.
 */
import { describe, expect, it } from 'vitest'
import { queryString } from '../../src/internal/url.ts'

/** The rule the fast path must match. */
function reference(query: Record<string, unknown>): string {
  const pairs = Object.entries(query).filter(([, value]) => value !== undefined)
  return pairs.length === 0
    ? ''
    : `?${pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`).join('&')}`
}

const values: unknown[] = [
  'plain',
  'A-Z_a.z~09',
  'a b',
  "!*'()",
  '+%&=?#/',
  'café',
  '😀',
  '',
  0,
  -0,
  7,
  -12,
  2 ** 53 - 1,
  2 ** 53,
  1e21,
  -1e21,
  0.5,
  NaN,
  Infinity,
  -Infinity,
  // Not what the types allow: what a parameter added later might let through.
  ['a b', 'c'],
  new Date(0),
  { toString: () => 'x y' },
  true,
  null,
]

describe('queryString', () => {
  it.each(values.map((value) => [value]))('%o is sent as encodeURIComponent(String(value)) would send it', (value) => {
    const query = { q: value } as Record<string, string | number | undefined>
    expect(queryString(query)).toBe(reference(query))
  })

  it('keys are escaped too; order kept, integer-like keys included; undefined left out', () => {
    const query = { 'a b': 1, '2': 'x', z: undefined, é: 'v', '1': 3 } as Record<string, string | number | undefined>
    expect(queryString(query)).toBe(reference(query))
  })

  it('the extra entry replaces its key in place, or comes last', () => {
    expect(queryString({ limit: 20, page: 1, q: 'a b' }, 'page', 7)).toBe('?limit=20&page=7&q=a%20b')
    expect(queryString({ limit: 20 }, 'page', 2)).toBe('?limit=20&page=2')
    expect(queryString({}, 'page', 2)).toBe('?page=2')
    expect(queryString({})).toBe('')
  })

  it('a lone surrogate is refused as encodeURIComponent refuses it', () => {
    expect(() => queryString({ q: '\uD800' })).toThrow(URIError)
  })
})
