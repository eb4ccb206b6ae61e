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
  // Optional peers stay imports; nothing is bundled in.
  external: ['ioredis', 'pg'],
});
