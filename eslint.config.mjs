// The project's lint rules: `npm run lint`. ESLint 9 (flat config) with typescript-eslint.
//
// Why ESLint and not Biome: Biome lints this tree in about 2 s against ESLint's 45 s (15 s of CPU)
// without type information, but the defect class that matters most in a server of queues, workers
// and child processes is a promise nobody awaits, and finding one needs the TypeScript checker:
// Biome's own floating-promise rule found none of the cases the type-aware rule found here. With
// type information ESLint takes about a minute of CPU on the ~70k lines linted (the cost of one
// `tsc --noEmit`), so only a handful of type-aware rules are switched on below.
//
// The base is `@eslint/js` recommended plus typescript-eslint's recommended set (not the
// type-checked presets). Every choice that differs from those defaults carries a comment.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', 'dist/**', 'coverage/**', '.tap/**', 'test/fixtures/**', 'test/groups/**', 'bench/**', 'console/dist/**'],
  },
  {
    linterOptions: {
      // A disable comment that no longer suppresses anything hides the next real finding.
      reportUnusedDisableDirectives: 'error',
    },
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: {
        // One program per tsconfig (the root one, console/tsconfig.json for the console).
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // The TypeScript compiler already reports undefined names, with types; the core rule
      // misreports type-only globals.
      'no-undef': 'off',
      // Type-aware: a promise that is neither awaited, returned, caught nor explicitly `void`ed
      // loses its rejection (an unhandled rejection ends the process). tap's `t.test()` returns a
      // promise the runner itself awaits, so that one type is known to be safe.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafePromises: [{ from: 'package', name: 'PromiseWithSubtest', package: '@tapjs/core' }] },
      ],
      // Type-aware: an async function where a void callback is expected (an event handler, a
      // timer) drops its rejection the same way. JSX attributes are exempt: a console click
      // handler that fails shows its own error state.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      // Type-aware: `await` on something that is not a promise is a sign the callee changed.
      '@typescript-eslint/await-thenable': 'error',
      // `==` only for the `x == null` idiom (null or undefined); everywhere else it coerces.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Type-only imports say so, so that erasing them at build time never changes load order.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      // A leading underscore marks a parameter kept for its position; rest siblings drop a key.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Extraction deliberately matches and strips control characters (NUL, C0 controls).
      'no-control-regex': 'off',
    },
  },
  {
    // Dependencies point one way, src <- test <- scripts (README, Layout): the product never loads
    // test or benchmark code, and a benchmark may use test/'s builders and harnesses but no test file.
    files: ['src/**/*.ts', 'routes/**/*.ts', 'plugins/**/*.ts', 'console/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)(test|scripts)/', message: 'src/, routes/, plugins/ and the console never import test/ or scripts/.' }] }],
    },
  },
  {
    files: ['scripts/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '\\.test\\.ts$', message: 'Scripts may import test/ builders and harnesses, never a test file.' }] }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests read response bodies as JSON and walk them with tap's deep asserts; an `any` there is
      // reported (the contract module's Static<> types are the way out) but does not fail the run.
      '@typescript-eslint/no-explicit-any': 'warn',
    },
  },
  {
    files: ['console/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    languageOptions: { globals: globals.browser },
    rules: {
      // Preact's hooks follow React's rules; only the two classic rules (not the compiler's set).
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'warn',
    },
  },
  {
    // Plain JavaScript entry points and boot shims: no tsconfig covers them, so no type-aware rules.
    files: ['**/*.{js,mjs,cjs}'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: globals.node },
  },
);
