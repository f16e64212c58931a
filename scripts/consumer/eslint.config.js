// ESLint 10 takes the config nearest to each linted file, so this one (not the root's) applies to
// scripts/consumer/: the root config, plus what its file patterns no longer reach from here (they
// are relative to the config's directory) and what the fixtures need as the plain JavaScript
// they are for the temporary consumer projects: Node globals, CommonJS `require` in .cjs, no type
// information for .cjs (the root tsconfig does not include .cjs, so the typed parser would fail).
import tseslint from 'typescript-eslint'
import root from '../../eslint.config.js'

const nodeGlobals = { console: 'readonly', process: 'readonly' }

export default tseslint.config(
  ...root,
  {
    // The root's relaxations for scripts/**/*.ts.
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-empty-function': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  { files: ['**/*.mjs'], languageOptions: { globals: nodeGlobals } },
  { files: ['**/*.cjs'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...nodeGlobals, require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
)
