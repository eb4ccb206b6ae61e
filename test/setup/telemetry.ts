/**
 * Registers the source's `tickwork/telemetry` entry (src/telemetry/index.ts) for every
 * test file, through `setupFiles` in vitest.config.ts: a `Scheduler` with `telemetry` then
 * instruments with the source under test, as an app that imports the entry does. Without
 * it, the scheduler would load the entry from dist/ by the package's name, as an installed
 * tickwork does (test/telemetry.test.ts tests that path too).
 */
import '../../src/telemetry/index.js';
