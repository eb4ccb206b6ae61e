import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    // Multi-process suites run real processes on the real clock; they have their own command.
    exclude: ['test/multi-process/**', 'node_modules/**'],
    // Fails any test during which an unhandled rejection or uncaught exception happened; telemetry from source.
    setupFiles: ['test/setup/process-guard.ts', 'test/setup/telemetry.ts'],
    // The CLI suite spawns the built bin: dist/ is built (when stale) once, before any file runs.
    globalSetup: ['test/setup/build.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
