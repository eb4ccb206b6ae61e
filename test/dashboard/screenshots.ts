/**
 * Generates the README's dashboard screenshots (docs/dashboard-*.png) in the browser
 * tests' Chromium: a memory store brought to a fixed moment by a FakeClock (a few
 * days of runs, a failing job, a fan-out run in progress, a suspended job, a manual
 * run with data), served by the dashboard on that clock, with the page's own clock
 * fixed to the same moment. Same inputs, same pictures.
 *
 *   npm run screenshots
 */
import { mkdirSync } from 'node:fs';
import { MemoryStore } from '../../adapters/memory/index.js';
import { Scheduler } from '../../src/scheduler.js';
import { FakeClock } from '../../src/testing/index.js';
import { launchBrowser, requireBrowser, serveDashboard } from './browser.js';

const START = '2026-03-01T00:00:00Z';
const SHOT_AT = '2026-03-03T10:07:00Z';

export async function generateScreenshots(dir = 'docs'): Promise<string[]> {
  const clock = new FakeClock(START);
  const store = new MemoryStore();
  const scheduler = new Scheduler({ store, clock, logger: false, instanceId: 'worker-1' });
  scheduler.register({
    name: 'nightly-report',
    schedule: '30 2 * * *',
    timezone: 'America/New_York',
    concurrencyPolicy: 'Forbid',
    handler: (ctx) => clock.sleep('3m', ctx.signal),
  });
  scheduler.register({
    name: 'sync-inventory',
    schedule: '*/15 * * * *',
    handler: async (ctx) => {
      await clock.sleep('40s', ctx.signal);
      if (ctx.scheduledAt.getUTCMinutes() === 45 && ctx.scheduledAt.getUTCHours() % 3 === 0) throw new Error('upstream returned 503 Service Unavailable');
    },
    retry: false,
    history: { succeeded: 8, failed: 4 },
  });
  scheduler.register({
    name: 'thumbnails',
    schedule: { every: '1h', anchor: START },
    completions: 8,
    parallelism: 3,
    handler: (ctx) => clock.sleep('6m', ctx.signal),
  });
  scheduler.register({ name: 'billing-close', schedule: '0 18 * * 5L', timezone: 'Europe/London', concurrencyPolicy: 'CatchUp', handler: () => {} });
  scheduler.register({ name: 'cleanup', schedule: '@daily', concurrencyPolicy: 'Replace', handler: () => clock.sleep('20s') });
  scheduler.register({ name: 'send-digest', schedule: '0 9 * * MON-FRI', timezone: 'Asia/Tokyo', handler: () => {} });
  await scheduler.start();
  await clock.advanceTo('2026-03-03T10:00:00Z');
  await scheduler.pause('billing-close');
  await scheduler.trigger('nightly-report', { data: { region: 'eu', dryRun: true }, idempotencyKey: 'rerun-2026-03-03' });
  await clock.advanceTo(SHOT_AT);

  const served = await serveDashboard({ store, clock, auth: () => true });
  const browser = await launchBrowser();
  const written: string[] = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    await page.clock.setFixedTime(new Date(SHOT_AT));
    const fanOut = (await store.listRuns({ jobName: 'thumbnails', statuses: ['running', 'pending'] }))[0];
    if (fanOut === undefined) throw new Error('no fan-out run in progress at the screenshot time');
    mkdirSync(dir, { recursive: true });
    for (const [name, path] of [
      ['jobs', '/'],
      ['job', '/jobs/nightly-report'],
      ['run', `/runs/${fanOut.id}`],
    ] as const) {
      await page.goto(served.url + path);
      const file = `${dir}/dashboard-${name}.png`;
      await page.screenshot({ path: file, fullPage: true });
      written.push(file);
    }
  } finally {
    await browser.close();
    await served.close();
    await scheduler.stop({ abort: true });
  }
  return written;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!requireBrowser()) process.exit(1);
  for (const file of await generateScreenshots()) console.log(`wrote ${file}`);
}
