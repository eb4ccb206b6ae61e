/**
 * The main example: a few jobs on the real clock and the in-memory store, printing
 * what fires for about 15 seconds, then shutting down cleanly.
 *
 *   npm install && npm run example
 */
import { Scheduler, systemClock } from '../src/index.js';

const seconds = Number(process.env.EXAMPLE_SECONDS ?? 15);
const started = Date.now();
const stamp = (): string => `+${((Date.now() - started) / 1000).toFixed(3)}s`;

const scheduler = new Scheduler(); // memory store, system clock

scheduler.register({
  name: 'heartbeat',
  schedule: '*/2 * * * * *', // 6 fields: every 2 seconds
  handler: ({ runId, scheduledAt }) => {
    console.log(`${stamp()} heartbeat   ${runId} (lag ${Date.now() - scheduledAt.getTime()} ms)`);
  },
});

scheduler.register({
  name: 'flaky-export',
  schedule: '*/5 * * * * *',
  retry: { limit: 2, initialDelay: '1s' },
  handler: ({ runId, attempt }) => {
    if (attempt === 1) throw new Error('upstream timed out');
    console.log(`${stamp()} export      ${runId} succeeded on attempt ${attempt}`);
  },
});

scheduler.register({
  name: 'slow-sync',
  schedule: { every: '1s' },
  concurrencyPolicy: 'Forbid', // a 2.5 s handler on a 1 s schedule: overlapping ticks are skipped
  handler: async ({ runId, signal }) => {
    console.log(`${stamp()} slow-sync   ${runId} started`);
    await systemClock.sleep('2500ms', signal);
  },
});

scheduler.register({
  name: 'welcome',
  schedule: { at: new Date(Date.now() + 3_000) }, // once, three seconds from now
  data: { message: 'hello from a one-off job' },
  handler: ({ data }) => console.log(`${stamp()} welcome     ${JSON.stringify(data)}`),
});

scheduler.register({
  name: 'shards',
  schedule: { at: new Date(Date.now() + 4_000) },
  completions: 6, // the handler runs once per index 0..5 ...
  parallelism: 3, // ... at most 3 at once (across every instance sharing the store)
  handler: async ({ index, completions, signal }) => {
    console.log(`${stamp()} shards      index ${index + 1}/${completions} started`);
    await systemClock.sleep('1s', signal);
  },
});

scheduler.on('run:succeeded', ({ run }) => {
  if (run.completions !== undefined) console.log(`${stamp()} shards      ${run.id}: all ${run.completions.succeeded} indices succeeded`);
});
scheduler.on('run:retry', ({ run, error, retryAt }) =>
  console.log(`${stamp()} retry       ${run.id} after "${error.message}", again at +${((retryAt.getTime() - started) / 1000).toFixed(1)}s`),
);
scheduler.on('tick:skipped', ({ jobName, scheduledAt }) =>
  console.log(`${stamp()} skipped     ${jobName} tick ${scheduledAt.toISOString().slice(11, 19)} (Forbid: previous run still active)`),
);
scheduler.on('error', (error) => console.error(`${stamp()} error       ${error.message}`));

const shutdown = async (): Promise<void> => {
  console.log(`${stamp()} stopping: waiting for running handlers...`);
  await scheduler.stop();
  for (const job of await scheduler.listJobs()) {
    console.log(`  ${job.name.padEnd(13)} succeeded ${job.succeeded}, failed ${job.failed}, skipped ${job.skipped}`);
  }
  console.log('stopped cleanly');
};

process.once('SIGINT', () => void shutdown().then(() => process.exit(0)));

await scheduler.start();
console.log(`${stamp()} scheduler started as ${scheduler.instanceId}; running for ${seconds} s (Ctrl-C stops early)`);
await systemClock.sleep(seconds * 1000);
await shutdown();
