/**
 * The CommonJS build `require()`s p-queue, which is ESM-only: Node ≥ 20.19 loads it
 * (package.json `engines`). A CommonJS app runs jobs through the executor's and the
 * planner's queues, with `maxConcurrentRuns`, and Node prints no warning about it.
 * Tests dist/ as `npm run build` left it, and builds it only when it is missing.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

const APP = `
const { Scheduler } = require(${JSON.stringify(path.join(ROOT, 'dist/index.cjs'))});
const { FakeClock } = require(${JSON.stringify(path.join(ROOT, 'dist/testing.cjs'))});
(async () => {
  const clock = new FakeClock('2026-01-01T00:00:00Z');
  const scheduler = new Scheduler({ clock, maxConcurrentRuns: 2, logger: false });
  let running = 0, most = 0, runs = 0;
  for (const name of ['a', 'b', 'c', 'd']) {
    scheduler.register({ name, schedule: { every: '1s' }, handler: async () => {
      running += 1; most = Math.max(most, running); runs += 1;
      await clock.sleep('100ms');
      running -= 1;
    } });
  }
  await scheduler.start();
  await clock.advance('3s');
  const stopping = scheduler.stop({ timeout: '1s' });
  await clock.advance('1s');
  await stopping;
  console.log(JSON.stringify({ runs, most }));
})();
`;

beforeAll(async () => {
  if (!existsSync(path.join(ROOT, 'dist', 'index.cjs'))) await run('npm', ['run', 'build'], { cwd: ROOT, timeout: 120_000 });
}, 150_000);

it('require() of the CommonJS build loads the ESM-only p-queue and runs jobs within maxConcurrentRuns, without a warning', async () => {
  const { stdout, stderr } = await run(process.execPath, ['-e', APP], { timeout: 20_000 });
  const { runs, most } = JSON.parse(stdout.trim()) as { runs: number; most: number };
  expect(most).toBe(2);
  expect(runs).toBeGreaterThanOrEqual(6);
  expect(stderr).toBe('');
});
