// One copy of the package's declarations instead of two. tsup writes the same declarations twice,
// `X.d.ts` for the ESM build and `X.d.cts` for the CommonJS one (they differ only in the extension
// of their imports): 280 KB of the package, a fifth of it. The CommonJS copy stays whole (node10
// resolution, `require` and TypeScript 5.5 read it; a `.d.cts` cannot re-export an ES module's
// declarations before TypeScript 5.8). Each ESM `X.d.ts` becomes one line that re-exports it:
// `export * from './X.cjs'` (an ES module may re-export a CommonJS module's names; TypeScript
// resolves `./X.cjs` to `./X.d.cts`). The ESM-only declaration chunks that only the replaced files
// imported (`fake-service-*.d.ts`) are removed, the CommonJS ones kept. Runs after tsup in `npm run build`.
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

const dist = join(import.meta.dirname, '..', 'dist')
const files = (await readdir(dist, { recursive: true })).map((file) => join(dist, file))
const declarations = new Set(files.filter((file) => file.endsWith('.d.ts')))
// Chunks the ESM declarations import (`from '../fake-service-u870lx3j.js'`), by file.
const chunks = new Set<string>()
for (const file of declarations) {
  const commonJs = file.replace(/\.d\.ts$/, '.d.cts')
  if (!files.includes(commonJs)) continue
  const [esm, cjs] = await Promise.all([readFile(file, 'utf8'), readFile(commonJs, 'utf8')])
  // The two copies must say the same thing; only an import's `.js` is the other's `.cjs`.
  if (esm.replaceAll(/(from '[^']+)\.js'/g, "$1.cjs'") !== cjs) throw new Error(`${file} and ${commonJs} differ: cannot share them`)
  for (const [, specifier] of esm.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)) chunks.add(join(dirname(file), `${specifier}.d.ts`))
  await writeFile(file, `export * from './${basename(file, '.d.ts')}.cjs';\n`)
}
// The declaration chunks (no built code of their name beside them: not an entry) imported only by
// the files just replaced, in both formats' names: the ESM one is imported no more.
for (const chunk of chunks) if (!files.includes(chunk.replace(/\.d\.ts$/, '.js'))) await rm(chunk)
