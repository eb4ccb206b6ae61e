/**
 * The layering rules `npm run lint:deps` checks (run by `npm run lint`, so by CI):
 *
 *   src/schedule/   pure schedule maths: imports only itself and errors.ts
 *   src/            the core: imports no adapter but the memory store (its default)
 *   adapters/<x>/   one store each: imports its own folder, adapters/shared/, and from src/
 *                   only the contract (store.ts, store-rules.ts, errors.ts) and
 *                   adapter-kit.ts (the helpers the core lends its adapters)
 *   adapters/shared/  helpers several adapters share: the same rule as an adapter
 *
 * and no import cycle among modules loaded at run time (type-only imports may cycle:
 * they vanish when compiled). dependency-cruiser rather than eslint's
 * no-restricted-imports: one config states folder rules with the importer's folder as
 * a variable (an adapter may import its own folder but not another's) and finds cycles,
 * which no-restricted-imports cannot.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'An import cycle among modules loaded at run time.',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'adapter-imports-core-internals',
      comment:
        'An adapter imports from src/ only the contract (store.ts, store-rules.ts, errors.ts) and adapter-kit.ts; ' +
        'expose what it needs there, or move a helper only adapters share to adapters/shared/.',
      severity: 'error',
      from: { path: '^adapters/' },
      to: { path: '^src/', pathNot: '^src/(store|store-rules|errors|adapter-kit)\\.ts$' },
    },
    {
      name: 'adapter-imports-another-adapter',
      comment: 'An adapter imports only its own folder and adapters/shared/.',
      severity: 'error',
      from: { path: '^adapters/([^/]+)/' },
      to: { path: '^adapters/', pathNot: ['^adapters/$1/', '^adapters/shared/'] },
    },
    {
      name: 'core-imports-an-adapter',
      comment: 'The core (src/) imports no adapter except the memory store, its default.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^adapters/', pathNot: '^adapters/memory/' },
    },
    {
      name: 'schedule-imports-outside',
      comment: 'src/schedule/ owns its types: it imports only itself and errors.ts.',
      severity: 'error',
      from: { path: '^src/schedule/' },
      to: { path: '^src/', pathNot: ['^src/schedule/', '^src/errors\\.ts$'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
