// What tsup does for the package's two commands (package.json `bin`), which users run and never
// import, and for the testing kit: the commands share the code the package already ships instead
// of carrying copies of it, and these files ship without source maps. The commands print messages,
// not stack traces; the fake's errors reach users as responses (a 500 naming the error), not as
// stack frames of their code. The SDK's own maps (dist/index.*) stay: its frames are in users'
// stack traces.
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Options } from 'tsup'

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number]

/**
 * `chat-service-fake` (src/testing/cli.ts → dist/testing/cli.js) runs the fake that
 * dist/testing/index.js holds: src/testing/command.ts imports the kit's entry (`./index.ts`), and
 * that import stays an import of the built entry beside it (`./index.js`) instead of bundling a
 * second copy of the fake (85 KB, and its map). Only command.ts's import: the entry itself is built
 * as usual.
 */
export const fakeBinUsesTestingEntry: EsbuildPlugin = {
  name: 'fake-bin-uses-testing-entry',
  setup(build) {
    const extension = build.initialOptions.format === 'cjs' ? '.cjs' : '.js'
    build.onResolve({ filter: /^\.\/index\.ts$/ }, (args) => {
      if (!/[/\\]src[/\\]testing[/\\]command\.ts$/.test(args.importer)) return undefined
      return { path: `./index${extension}`, external: true }
    })
  },
}

type TsupPlugin = NonNullable<Options['plugins']>[number]

/** Built files that ship without a map, relative to the output directory (in either format). */
const WITHOUT_MAPS = [
  'cli/index.cjs',
  'cli/index.js',
  'testing/cli.js',
  'testing/cli.cjs',
  'testing/index.js',
  'testing/index.cjs',
  'testing/msw.js',
  'testing/msw.cjs',
]

/**
 * Once tsup has written a build: removes the maps of the files above and the `//# sourceMappingURL=`
 * line that points at them (a dangling one makes bundlers and debuggers warn).
 */
export const withoutSourceMaps: TsupPlugin = {
  name: 'without-source-maps',
  async buildEnd({ writtenFiles }) {
    const outDir = resolve(this.options.outDir)
    const files = new Set(WITHOUT_MAPS.map((file) => join(outDir, file)))
    for (const { name } of writtenFiles) {
      const file = resolve(name)
      if (!files.has(file)) continue
      await rm(`${file}.map`, { force: true })
      const code = await readFile(file, 'utf8')
      await writeFile(file, code.replace(/\n\/\/# sourceMappingURL=\S*\s*$/, '\n'))
    }
  },
}
