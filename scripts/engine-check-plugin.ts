// esbuild plugin for tsup: keeps `src/engine-check.ts` out of the entry bundles.
//
// Each entry's first line is `import './engine-check.ts'` (or `'../engine-check.ts'`). Bundled in,
// its code would run after undici is evaluated: an ESM file evaluates all its `import`s (undici,
// zod) before any of its code, and undici crashes on Node 20 before a check could speak. Marked
// external, the import stays an `import` / `require` of its own file, which esbuild emits as the
// entry's FIRST import (it was the first one in the source), so it runs before undici in both
// builds. The path is rewritten to the built file of the same format (`.js` for ESM, `.cjs` for
// CommonJS); `src/engine-check.ts` is also a tsup entry, so that file exists next to the entries.
// test/packaging/engine-check.test.ts checks the emitted order and runs the build on Node 20.
import type { Options } from 'tsup'

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number]

export const engineCheckFirst: EsbuildPlugin = {
  name: 'engine-check-first',
  setup(build) {
    const extension = build.initialOptions.format === 'cjs' ? '.cjs' : '.js'
    build.onResolve({ filter: /(^|\/)engine-check\.ts$/ }, (args) => {
      if (args.kind === 'entry-point') return undefined
      // sideEffects: the package says `"sideEffects"` only for the built file; this import is kept for its effect.
      return { path: args.path.replace(/\.ts$/, extension), external: true, sideEffects: true }
    })
  },
}
