import { defineConfig } from 'vitest/config';

/** Real processes on the real clock against real servers: `npm run test:multi-process`. */
export default defineConfig({
  test: {
    include: ['test/multi-process/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The suites kill processes and pause servers: one file at a time.
    fileParallelism: false,
  },
});
