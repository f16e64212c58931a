// `util.inspect` and its custom-inspection symbol without importing `node:util` as a module. The
// first `import` of a built-in makes Node build an ES module facade of it, reading every export
// (for `node:util`, its lazily loaded ones too): about 3.1 M instructions at import, 0.4 % of
// importing the SDK (BENCHMARKS.md, issue 32), for a function the SDK calls only when a client is
// shown. `process.getBuiltinModule` returns the same object without a facade (as `shard.ts` does for
// `node:crypto`). (Line comments: a module's doc block would be kept by the declaration bundler
// above the next declaration: scripts/check-dts.ts.)
import type { inspect as utilInspect } from 'node:util'

/**
 * `util.inspect.custom`: the registered symbol itself, which `util` defines as this same
 * `Symbol.for` (typed as util's, so that a key made with it matches `util.inspect.custom`).
 * @internal
 */
export const INSPECT_CUSTOM = Symbol.for('nodejs.util.inspect.custom') as typeof utilInspect.custom

/** `util.inspect(value)`, `node:util` read when called. @internal */
export function inspect(value: unknown): string {
  return process.getBuiltinModule('node:util').inspect(value)
}
