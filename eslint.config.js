// One lint config for the whole repository: typescript-eslint's recommended rules plus the few
// house rules that TypeScript's own checks do not cover.
import js from '@eslint/js'
import reactHooks from 'eslint-plugin-react-hooks'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/.turbo/**', '**/.data/**', '**/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'TSEnumDeclaration', message: 'Use an `as const` object instead of an enum.' },
      ],
    },
  },
  {
    // The console's React code: the rules of hooks, which TypeScript cannot check.
    files: ['apps/console/src/**/*.tsx', 'apps/console/src/**/*.ts'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    // The console takes its API types from the route schemas, as types only: no schema (nor
    // TypeBox) code enters its bundle.
    files: ['apps/console/src/**/*.tsx', 'apps/console/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: ['@tracewell/api-schemas', '@sinclair/typebox'].map((name) => ({ name, allowTypeImports: true, message: 'The console imports the API schemas as types only (import type).' })),
      }],
    },
  },
  {
    // Only packages/config reads the environment: settings are validated once, in one place.
    files: ['apps/**/*.ts', 'packages/**/*.ts'],
    ignores: ['packages/config/**', '**/test/**', '**/*.test.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read settings through @tracewell/config.' }],
    },
  },
  {
    // A migration's result must never change once it has run: it imports kysely, node's own
    // modules and its frozen copies beside it (packages/db/src/migrations/frozen/README.md), nothing
    // of the project's other packages or of today's repositories. packages/db/test/migration-imports.test.ts
    // proves the rule fails.
    files: ['packages/db/src/migrations/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          regex: '^(?!(kysely|node:.+|genai-prices-0\\.1\\.8|\\./(?!.*\\.\\./).+)$)',
          message: 'Migrations import only kysely, node: built-ins and their frozen copies in ./frozen (packages/db/src/migrations/frozen/README.md).',
        }],
      }],
    },
  },
)
