import { defineConfig } from 'tsup'
import { fakeBinUsesTestingEntry, withoutSourceMaps } from './scripts/bin-plugins.ts'
import { classNames } from './scripts/class-names.ts'
import { docComments } from './scripts/doc-comments.ts'
import { engineCheckFirst } from './scripts/engine-check-plugin.ts'
import { lineMaps } from './scripts/line-maps.ts'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'testing/msw': 'src/testing/msw.ts',
    // The `chat-service-fake` command (package.json `bin`); its CommonJS build and types stay out of the package (`files`).
    'testing/cli': 'src/testing/cli.ts',
    // The `chat-service` command (package.json `bin`): it loads the SDK by the package's own name
    // (external below), so it runs on the package's public API and shares one copy of it; cli-progress,
    // a devDependency, is bundled in, so the runtime dependencies stay undici and zod. The bin is the
    // CommonJS build: there the SDK's `require` runs only when a command needs it (help and --version
    // skip loading undici and zod), and cli-progress's own `require`s work. Its ESM build and types
    // stay out of the package (`files`).
    'cli/index': 'src/cli/bin.ts',
    // Imported first by each entry, kept a separate file (see scripts/engine-check-plugin.ts).
    'engine-check': 'src/engine-check.ts',
    // What browsers, workers, edge runtimes and Bun get for the root entry (package.json `exports` conditions); its CommonJS build is the one used.
    'unsupported-runtime': 'src/unsupported-runtime.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  // Source maps map stack traces (node --enable-source-maps, error trackers) to src/ files and
  // lines; they leave out the sources themselves (`sourcesContent`, 70 % of their bytes), which only a
  // debugger stepping through would show: the package unpacked fell from 3.0 MB to under 1.5 MB
  // (scripts/check-size.ts keeps it there). Each generated line keeps one mapping, enough for a
  // stack trace's file and line (scripts/line-maps.ts). The commands and the testing kit ship
  // without maps (scripts/bin-plugins.ts says why).
  sourcemap: true,
  esbuildOptions(options) {
    options.sourcesContent = false
  },
  target: 'node22',
  platform: 'node',
  splitting: false,
  shims: true,
  external: ['undici', 'zod', 'msw', '@mswjs/interceptors', 'chat-service-sdk'],
  noExternal: ['cli-progress'],
  esbuildPlugins: [engineCheckFirst, fakeBinUsesTestingEntry],
  // classNames: the built classes keep src/'s names; docComments: the built JavaScript leaves its
  // TSDoc to the declarations (each file says why).
  plugins: [classNames, withoutSourceMaps, lineMaps, docComments],
})
