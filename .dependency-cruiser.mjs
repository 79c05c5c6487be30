// `npm run lint` runs dependency-cruiser with these rules: no import circle, between files or
// between workspaces, type-only imports included; and @tracewell/http reaches no database code.
// Chosen over madge (no release since 2024, and it
// does not read package.json "exports", which every workspace here uses) and over
// eslint-plugin-import-x's no-cycle (needs a TypeScript resolver besides, and walks the graph once
// per file): dependency-cruiser is maintained, resolves "exports" and .ts imports as Node does, and
// checks the whole repository in one pass.
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle: invert the dependency (pass a function or type in) so each module depends one way.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'http-knows-no-database',
      severity: 'error',
      comment:
        '@tracewell/http is the Fastify kit and stays free of database code: what needs both (the db plugin, the key store, the schema check) is @tracewell/service, and the error handler is told the database\'s failures (createApp\'s databaseFailures).',
      from: { path: '^packages/http/' },
      // Reachable, not only imported: a package in between must not carry the database in either.
      to: { path: '^packages/db/', reachable: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['(^|/)node_modules/', '(^|/)dist/', '(^|/)\\.data/', '(^|/)\\.turbo/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default'], extensions: ['.ts', '.tsx', '.js', '.mjs'] },
  },
}
