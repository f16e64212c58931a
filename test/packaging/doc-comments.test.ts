// scripts/doc-comments.ts: the build step that leaves the TSDoc of the built JavaScript to the
// declarations. What it must keep: every line where it was (the source maps map lines), code, and
// a `/**` that is not a comment.
import { describe, expect, it } from 'vitest'
import { withoutDocComments } from '../../scripts/doc-comments.ts'

const built = [
  'class Pace {',
  '  /**',
  '   * Requests per second.',
  '   */',
  '  rate() {',
  "    return `/** not a comment */ ${'/** nor this */'}`",
  '  }',
  '  /** One line. */ get on() { return true }',
  '}',
  '/*! legal */',
  'const x = /* @__PURE__ */ make()',
].join('\n')

describe('the built JavaScript without its TSDoc', () => {
  it('keeps every line and column of code, strings and legal comments; drops the TSDoc blocks', () => {
    const out = withoutDocComments(built, 'module')
    const lines = out.split('\n')
    expect(lines).toHaveLength(built.split('\n').length)
    expect(out).not.toContain('Requests per second')
    expect(out).not.toContain('One line.')
    expect(lines[5]).toBe(built.split('\n')[5]) // the template literal's `/**` stays
    expect(lines[7]).toBe(`${' '.repeat(2 + '/** One line. */'.length)} get on() { return true }`) // the getter keeps its column
    expect(out).toContain('/*! legal */')
    expect(out).toContain('/* @__PURE__ */ make()')
  })
})
