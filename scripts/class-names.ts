// The built classes keep the names users see in src/. esbuild bundles a class whose body names
// itself (the factories in static blocks, `new CustomerUsers(...)` in `withMetadata`, the client's
// static fields) as `var CustomerUsers = class _CustomerUsers {...}`: the class's `name` is then
// `_CustomerUsers`, and so is what `util.inspect`, `constructor.name` and every stack trace frame
// of its methods show (`at _CustomerUsers.update`). Its `keepNames` would fix that with a
// `__name(...)` call for each of ~400 functions, run by every process at import (issue 32).
//
// This names the class back, `var X = class X {...}`, and the references to `_X` in its body with
// it. In the body, `_X` can only be the class: esbuild named the class's own binding so that no
// binding inside the body takes that name; and `X`, now the class's own name there, was the class
// there before too (esbuild gives no binding inside a top-level statement a top-level name, so any
// `X` in the body meant the top-level class). Outside the body, `_X` may be anything (another
// module's parameter), so nothing outside it is touched. The body is the lines down to the first
// `};` indented as the class's first line: esbuild indents everything inside a statement further.
//
// What this step cannot handle with certainty fails the build, naming the class, rather than
// leaving a class named `_X`: an inner name other than `_X` (`_X2`, when `_X` was taken), or a body
// without its end.
import type { Options } from 'tsup'

type TsupPlugin = NonNullable<Options['plugins']>[number]

/**
 * `code` (esbuild's output) with each `var X = class _X {...}` (or `X = class _X {...}`) named `X`, `_X` in its body too.
 * @throws Error naming the class when it cannot be renamed with certainty (see the file).
 */
export function keepClassNames(code: string): string {
  const lines = code.split('\n')
  for (let start = 0; start < lines.length; start++) {
    // `var X = class _X {` at the top level; `  X = class _X {` in the CommonJS command's bundle,
    // where esbuild declares a module's names first and makes them in a function run on first use.
    const head = /^( *)(?:var )?([A-Za-z$][\w$]*) = class (_[\w$]*)\b/.exec(lines[start] ?? '')
    if (head === null) continue
    const [, indent = '', name = '', inner = ''] = head
    const fail = (why: string): never => {
      throw new Error(`class-names: cannot name ${inner} back to ${name}: ${why} (scripts/class-names.ts)`)
    }
    if (inner !== `_${name}`) fail(`esbuild named it ${inner}, not _${name}`)
    const end = lines[start]?.endsWith('};') === true ? start : lines.indexOf(`${indent}};`, start)
    if (end === -1) fail('no `};` ends its body')
    // `_X` as a name of its own: not a member (`obj._X`, `#_X`) nor part of a longer name (`__X`, `_X2`).
    const reference = new RegExp(`(?<![\\w$.#])${inner.replaceAll('$', '\\$')}(?![\\w$])`, 'g')
    for (let line = start; line <= end; line++) lines[line] = (lines[line] ?? '').replace(reference, name)
  }
  return lines.join('\n')
}

/** Names every JavaScript chunk's classes back (see the file). Lines stay where they were, so the source maps hold. */
export const classNames: TsupPlugin = {
  name: 'class-names',
  renderChunk(code, info) {
    if (!/\.(c|m)?js$/.test(info.path)) return undefined
    const renamed = keepClassNames(code)
    // No map of its own: tsup keeps the chunk's (a returned map would be composed onto it).
    return renamed === code ? undefined : { code: renamed }
  },
}
