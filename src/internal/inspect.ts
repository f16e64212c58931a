/**
 * `util.inspect` and its `custom` symbol without importing `node:util` as a module: Node builds an
 * ES module of a built-in from every export it has, loading the lazy ones (`parseArgs`, `diff`,
 * ...), a cost each process importing the SDK would pay (issue 32). The symbol is the registered
 * one Node documents as `util.inspect.custom`; the function is loaded on first use.
 */
import type * as util from 'node:util'

/** `util.inspect.custom`: the method `util.inspect` (and `console.log`) calls for an object's own view. */
export const INSPECT_CUSTOM: typeof util.inspect.custom = Symbol.for('nodejs.util.inspect.custom') as typeof util.inspect.custom

/** `util.inspect`, loaded on first use. */
export function inspect(value: unknown, options?: util.InspectOptions): string {
  return process.getBuiltinModule('node:util').inspect(value, options)
}
