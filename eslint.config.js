// ESLint flat config: typescript-eslint strict + type-checked rules over the source, tests,
// examples and scripts. Formatting is Prettier's job (`npm run format:check`).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'coverage/',
      'node_modules/',
      'docs/api/',
      '.ci/',
      'api/',
      'bench/results/',
      '.bench-out/',
      'test/docs/.snippets/',
      'tsup.config.bundled_*',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'examples/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-empty-function': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  // The import rules of src/ (DEVELOPERS.md, "Layout"): each layer imports only the layers below it,
  // errors < schemas < core < internal < pagination < resources < client, and the testing kit imports
  // nothing of the SDK (it is a second, independent reading of the spec). `core` holds the public
  // types and classes of the request layer, `internal` the machinery behind them, which the public
  // modules must never need. src/endpoints.ts, the spec's table of endpoints (pure data, no
  // imports), is read by every layer and by the testing kit. A line here fails CI when broken.
  ...layers({
    'src/errors/**': ['schemas', 'core', 'internal', 'pagination', 'resources', 'client', 'testing'],
    'src/schemas/**': ['core', 'internal', 'pagination', 'resources', 'client', 'testing'],
    'src/core/**': ['internal', 'pagination', 'resources', 'client', 'testing'],
    'src/internal/**': ['pagination', 'resources', 'client', 'testing'],
    'src/pagination/**': ['resources', 'client', 'testing'],
    'src/resources/**': ['client', 'testing'],
    'src/testing/**': ['errors', 'schemas', 'core', 'internal', 'pagination', 'resources', 'client', 'index', 'version'],
    // The `chat-service` command uses the SDK by the package's name only: its first consumer, on its
    // public API. Except version.ts, the SDK's VERSION (a constant, no imports): bundled into the bin
    // so that --version and help need not load the SDK (src/cli/main.ts).
    'src/cli/**': ['errors', 'schemas', 'core', 'internal', 'pagination', 'resources', 'client', 'index', 'testing'],
  }),
)

/** One `no-restricted-imports` block per folder, naming the src/ modules it must not import. */
function layers(forbidden) {
  return Object.entries(forbidden).map(([files, names]) => ({
    files: [files],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./)+(${names.join('|')})(/|\\.ts$)`,
              message: `${files.split('/')[1]} must not import ${names.join(', ')}: see DEVELOPERS.md, "Layout".`,
            },
          ],
        },
      ],
    },
  }))
}
