// The built classes keep the names users see in src/. esbuild bundles a class whose body names
// itself (the factories in static blocks, `new CustomerUsers(...)` in `withMetadata`, the client's
// static fields) as `var CustomerUsers = class _CustomerUsers {...}`: the class's `name` is then
// `_CustomerUsers`, and so is what `util.inspect`, `constructor.name` and every stack trace frame
// of its methods show (`at _CustomerUsers.update`). Its `keepNames` would fix that with a
// `__name(...)` call for each of ~400 functions, run by every process at import (issue 32).
//
// This renames the inner name back: `var X = class X {...}`, the references in its body to match.
// A class expression's own name is bound in its body only, to the class itself, which the outer
// `var X` also is; esbuild gives no other binding in the bundle a top-level class's name (it
// renames the others), so no reference in the body can mean anything else.
import type { Options } from 'tsup'

type TsupPlugin = NonNullable<Options['plugins']>[number]

/** `code` with each top-level `var X = class _X` named `X` again (and `_X` in it), where `_X` is bound nowhere else. */
export function keepClassNames(code: string): string {
  let out = code
  for (const [, name] of code.matchAll(/^var ([A-Za-z]\w*) = class _\1\b/gm)) {
    const inner = `_${name as string}`
    const bindings = out.match(new RegExp(`\\b(?:var|let|const|function|class)\\s+${inner}\\b`, 'g')) ?? []
    if (bindings.length !== 1) continue
    // Not a member (`obj._X`) nor part of a longer name (`__X`, `_X2`).
    out = out.replace(new RegExp(`(?<![\\w$.#])${inner}(?![\\w$])`, 'g'), name as string)
  }
  return out
}

/** Renames every JavaScript chunk's classes back to their own names (see the file). Lines stay where they were, so the source maps hold. */
export const classNames: TsupPlugin = {
  name: 'class-names',
  renderChunk(code, info) {
    if (!/\.(c|m)?js$/.test(info.path)) return undefined
    const renamed = keepClassNames(code)
    // No map of its own: tsup keeps the chunk's (a returned map would be composed onto it).
    return renamed === code ? undefined : { code: renamed }
  },
}
