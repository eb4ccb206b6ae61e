/**
 * The build: one ESM and one CommonJS file per entry of package.json's `exports` (code shared
 * by entries goes into chunks, so each class exists once and `instanceof` holds across
 * entries), and their declarations (.d.ts for `import`, .d.cts for `require`).
 *
 * Declarations are rolled up by rollup-plugin-dts, as tsup's own `dts` does, but with
 * readable file names: tsup names the chunks that several entries share `store-DsE23yg9.d.ts`
 * and exports their types under one-letter aliases, which is where go-to-definition lands.
 * Here a shared chunk is named after its module (`store.d.ts`) and keeps its export names.
 * Unlike tsup's `dts`, this emits declarations without type-checking: `npm run typecheck`
 * does that (CI runs it before the build).
 *
 * No source maps: the output is not minified, so a stack trace into dist/ already reads like
 * the source, and the maps (which embed the TypeScript source) were two thirds of the tarball.
 */
import { rm } from 'node:fs/promises';
import { defineConfig } from 'tsup';
import { rollup, type OutputOptions } from 'rollup';
import { dts } from 'rollup-plugin-dts';

const entry = {
  index: 'src/index.ts',
  memory: 'adapters/memory/index.ts',
  redis: 'adapters/redis/index.ts',
  postgres: 'adapters/postgres/index.ts',
  testing: 'src/testing/index.ts',
  store: 'src/store-entry.ts',
  dashboard: 'src/dashboard/index.ts',
  telemetry: 'src/telemetry/index.ts',
};

/**
 * The `tickwork` bin (package.json `bin`: dist/cli.js, its `#!` kept by esbuild). Built with the
 * entries above so that it shares their chunks instead of carrying a second copy of the library;
 * it has no declarations (nothing imports it), and its CommonJS twin is deleted (package.json
 * `bin` runs the ES module).
 */
const bin = { cli: 'cli/main.ts' };

/** Imports of other packages (dependencies, optional peers) stay imports: rollup-plugin-dts inlines only our own modules. */
async function buildDeclarations(): Promise<void> {
  const bundle = await rollup({ input: entry, external: [/^node:/], plugins: [dts({ tsconfig: 'tsconfig.json', compilerOptions: { noEmit: false } })] });
  const output = (extension: string): OutputOptions => ({
    dir: 'dist',
    entryFileNames: `[name].${extension}`,
    // The chunk of the public types is named after their module, whichever module rollup would name it after.
    chunkFileNames: (chunk) => (chunk.moduleIds.some((id) => /[\\/]src[\\/]types\.ts$/.test(id)) ? `types.${extension}` : `[name].${extension}`),
    minifyInternalExports: false,
  });
  try {
    await Promise.all([bundle.write(output('d.ts')), bundle.write(output('d.cts'))]);
  } finally {
    await bundle.close();
  }
}

export default defineConfig({
  entry: { ...entry, ...bin },
  format: ['esm', 'cjs'],
  clean: true,
  target: 'node20',
  splitting: true,
  treeshake: true,
  // Optional peers are loaded at run time (src/driver.ts); nothing is bundled in.
  external: ['ioredis', 'pg', '@opentelemetry/api'],
  // `import.meta.url` in the CommonJS build (src/driver.ts makes a `require` from it only in ES modules).
  shims: true,
  async onSuccess() {
    await Promise.all([buildDeclarations(), rm('dist/cli.cjs', { force: true })]);
  },
});
