import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    memory: 'adapters/memory/index.ts',
    redis: 'adapters/redis/index.ts',
    postgres: 'adapters/postgres/index.ts',
    testing: 'src/testing/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  splitting: true,
  treeshake: true,
  // Optional peers are loaded at run time (src/driver.ts); nothing is bundled in.
  external: ['ioredis', 'pg', '@opentelemetry/api'],
  // `import.meta.url` in the CommonJS build (src/driver.ts makes a `require` from it only in ES modules).
  shims: true,
});
